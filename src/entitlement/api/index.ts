export { orgIdentity, orgProblem, usedOrg } from './org.ts';
export * from './schema.ts';
export { Decision, type PlatformVerdict } from './verdict.ts';
