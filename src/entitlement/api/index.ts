export { orgIdentity, orgProblem, usedOrg } from './org.ts';
export * from './schemas.ts';
export { Decision, type PlatformVerdict } from './verdict.ts';
