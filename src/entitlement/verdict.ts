import type { AccessType } from '../deposit/index.ts';
import type { ContentLink, Entitled, EntitlementSource, Org } from './schemas.ts';

/** One platform's decision about one DOI, before the DOI's platforms are combined (combineVerdicts). */
export interface PlatformVerdict {
  /** 200 decided (or failed: entitled maybe, source unknown); 504 not decided in time */
  statusCode: 200 | 504;
  entitled: Entitled;
  source: EntitlementSource;
  accessType?: AccessType;
  document?: string;
  vor?: ContentLink[];
  /** the org the platform was asked with (platform answers, live or cached) */
  org?: Org;
}

/**
 * The decision for a DOI that several paid platforms hold (docs/interface.md, "Entitlement API"): the first
 * `yes` wins as soon as it arrives; all `no` gives the first platform's `no`; otherwise the first platform's (in
 * store order) answer that is not `no` (a `maybe`, a failure, a time-out). Resolves as soon as it is decided.
 */
export function combineVerdicts(verdicts: readonly Promise<PlatformVerdict>[]): Promise<PlatformVerdict> {
  if (verdicts.length === 1) return verdicts[0]!;
  return new Promise((resolve) => {
    const settled: (PlatformVerdict | undefined)[] = verdicts.map(() => undefined);
    let left = verdicts.length;
    verdicts.forEach((p, i) =>
      p.then((v) => {
        if (v.entitled === 'yes') return resolve(v);
        settled[i] = v;
        if (--left > 0) return;
        resolve(settled.find((s) => s!.entitled !== 'no') ?? settled[0]!);
      }),
    );
  });
}
