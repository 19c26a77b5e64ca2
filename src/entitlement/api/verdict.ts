import type { AccessType } from '../../deposit/index.ts';
import type { ContentLink, Entitled, EntitlementSource, License, Org } from './schema.ts';

/** One platform's decision about one DOI, before the DOI's platforms are combined (Decision). */
export interface PlatformVerdict {
  /** 200 decided (or failed: entitled maybe, source unknown); 504 not decided in time */
  statusCode: 200 | 504;
  entitled: Entitled;
  source: EntitlementSource;
  accessType?: AccessType;
  document?: string;
  vor?: ContentLink[];
  av?: ContentLink[];
  licenses?: License[];
  /** the org the platform was asked with (platform answers, live or cached) */
  org?: Org;
  /** the platform's customer the use was counted for (a live answer's org.customerID): shown to counter integrators only */
  customerID?: string;
}

/**
 * The decisions for the DOIs of one request, each combined from its platforms' verdicts as they arrive
 * (docs/interface.md, "Entitlement API"): the first `yes` wins as soon as it arrives; all `no` gives the first
 * platform's `no`; otherwise the first platform's (in store order) verdict that is not `no` (a `maybe`, a failure,
 * a time-out). A DOI's verdict is set once; `done` resolves when every DOI has one.
 */
export class Decision {
  /** per DOI, its decision once made */
  readonly verdicts: (PlatformVerdict | undefined)[];
  readonly done: Promise<void>;
  /** per DOI with several platforms, the verdicts that were not `yes` so far, by platform number (made on the first) */
  private readonly parts: (PlatformVerdict[] | undefined)[];
  private readonly left: Int32Array;
  private undecided: number;
  private finish!: () => void;

  /** `dois[i].holdings.length` verdicts make DOI i's decision */
  constructor(dois: readonly { holdings: readonly unknown[] }[]) {
    this.verdicts = new Array(dois.length);
    this.parts = new Array(dois.length);
    this.left = Int32Array.from(dois, (d) => d.holdings.length);
    this.undecided = dois.length;
    this.done = new Promise((resolve) => (this.finish = resolve));
    if (this.undecided === 0) this.finish();
  }

  /** The verdict of DOI `at`'s platform number `slot` (in store order). */
  put(at: number, slot: number, v: PlatformVerdict): void {
    if (this.verdicts[at] !== undefined) return; // decided by an earlier yes
    if (v.entitled === 'yes') return this.decide(at, v);
    const left = --this.left[at]!;
    let parts = this.parts[at];
    if (left === 0 && parts === undefined) return this.decide(at, v); // its only verdict that was not yes
    if (parts === undefined) this.parts[at] = parts = [];
    parts[slot] = v;
    // the last one in: every slot holds a verdict (a yes would have decided already)
    if (left === 0) this.decide(at, parts.find((p) => p.entitled !== 'no') ?? parts[0]!);
  }

  private decide(at: number, v: PlatformVerdict): void {
    this.verdicts[at] = v;
    if (--this.undecided === 0) this.finish();
  }
}
