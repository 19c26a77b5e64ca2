import { seeded } from '../../test/support/fixtures.ts';

/**
 * Realistic deposit files for the ingest benchmarks. What makes them realistic is what drives the store's cost:
 * - each file comes from one platform;
 * - real-looking DOI prefixes and suffix patterns (Elsevier PIIs with upper case, Wiley, Springer, T&F, SAGE);
 * - new DOIs minted in sequence per journal, as publishers do, so a file's new DOIs share B-tree pages;
 * - the access-type mix (mostly paid), ~10% of records without vor, ~3% removals of earlier DOIs.
 * Deterministic: a seeded PRNG, so two runs write byte-identical files.
 */

export const ACCESS_MIX: [string, number][] = [
  ['paid', 0.62],
  ['open', 0.2],
  ['free', 0.1],
  ['permFree', 0.08],
];

interface Journal {
  next: number;
  mint(n: number): string;
}

interface PlatformModel {
  name: string;
  host: string;
  journals: Journal[];
  /** DOIs minted so far, in mint order */
  minted: string[];
}

export interface Deposit {
  platform: string;
  lines: string[];
}

/** mulberry32, from the test fixtures: small, fast, good enough for test data */
export const prng = seeded;

const pad = (n: number, w: number) => String(n).padStart(w, '0');

function journals(count: number, make: (j: number) => (n: number) => string): Journal[] {
  return Array.from({ length: count }, (_, j) => ({ next: 1, mint: make(j) }));
}

const ELSEVIER_CODES = [
  'cell',
  'neuron',
  'jcat',
  'tet',
  'jmb',
  'bbrc',
  'ijpharm',
  'envpol',
  'jhep',
  'jacc',
  'scitotenv',
  'chemosphere',
];

function platforms(): PlatformModel[] {
  return [
    {
      name: 'sciencedirect',
      host: 'https://www.sciencedirect.com/science/article/pii',
      journals: journals(24, (j) =>
        j < ELSEVIER_CODES.length
          ? (n) =>
              `10.1016/j.${ELSEVIER_CODES[j]}.${2020 + Math.floor(n / 12000)}.${pad(1 + (Math.floor(n / 1000) % 12), 2)}.${pad(n % 1000, 3)}`
          : (n) =>
              `10.1016/S${pad(1400 + j * 37, 4)}-${pad(6700 + j, 4)}(${pad(20 + Math.floor(n / 100000), 2)})${pad(n % 100000, 5)}-${n % 10}`,
      ),
      minted: [],
    },
    {
      name: 'wiley',
      host: 'https://onlinelibrary.wiley.com/doi/pdf',
      journals: journals(20, (j) => {
        const codes = ['anie', 'adma', 'chem', 'ejoc', 'jcc', 'pssb', 'cssc', 'smll', 'aenm', 'adfm'];
        const prefix = j % 2 === 0 ? '10.1002' : '10.1111';
        const code = j % 2 === 0 ? codes[j / 2]! : `j.${1365 + j}-${pad(2000 + j, 4)}`;
        return (n) =>
          prefix === '10.1002' ? `${prefix}/${code}.2025${pad(n, 5)}` : `${prefix}/${code}.2025.${pad(n, 5)}`;
      }),
      minted: [],
    },
    {
      name: 'springer',
      host: 'https://link.springer.com/content/pdf',
      journals: journals(30, (j) => (n) => `10.1007/s${pad(10000 + j * 211, 5)}-025-${pad(n, 5)}-${n % 10}`),
      minted: [],
    },
    {
      name: 'tandf',
      host: 'https://www.tandfonline.com/doi/pdf',
      journals: journals(25, (j) => (n) => `10.1080/${pad(14786 + j * 1013, 8)}.2025.${pad(2000000 + n, 7)}`),
      minted: [],
    },
    {
      name: 'sage',
      host: 'https://journals.sagepub.com/doi/pdf',
      journals: journals(20, (j) => (n) => `10.1177/${pad(956797 + j * 77, 8)}25${pad(n, 7)}`),
      minted: [],
    },
  ];
}

export const PLATFORM_NAMES = platforms().map((p) => p.name);

/** The deposit record of one DOI at one version: `version` varies access type and links. */
function recordLine(p: PlatformModel, doi: string, rand: () => number): string {
  const r = rand();
  let acc = 0;
  let accessType = 'paid';
  for (const [a, w] of ACCESS_MIX) {
    acc += w;
    if (r < acc) {
      accessType = a;
      break;
    }
  }
  if (rand() < 0.1) return JSON.stringify({ doi, accessType });
  const vor: { url: string; contentType: string }[] = [{ url: `${p.host}/${doi}`, contentType: 'application/pdf' }];
  if (rand() < 0.4)
    vor.push({
      url: p.host.endsWith('/pdf') ? `${p.host.slice(0, -4)}/full/${doi}` : `${p.host}/${doi}/fulltext`,
      contentType: 'text/html',
    });
  return JSON.stringify({ doi, accessType, vor });
}

/**
 * Keeps the publisher-side state: what each platform minted and the last line sent per DOI, so a generated
 * "unchanged re-deposit" is exactly what the store holds.
 */
export class DepositGenerator {
  private readonly rand: () => number;
  private readonly models = platforms();
  /** doi -> last deposited line (live DOIs only) */
  readonly live = new Map<string, string>();

  constructor(seed = 20261123) {
    this.rand = prng(seed);
  }

  platformOf(i: number): PlatformModel {
    return this.models[i % this.models.length]!;
  }

  /** New DOIs minted in sequence in a few journals, plus ~3% removals of earlier DOIs of the platform. */
  initialFile(fileIndex: number, records: number): Deposit {
    const p = this.platformOf(fileIndex);
    const removals = p.minted.length > 0 ? Math.round(records * 0.03) : 0;
    // removals first: they target DOIs of earlier files, not the ones minted here
    const lines = this.removalLines(p, removals, new Set());
    lines.push(...this.mintLines(p, records - removals));
    return { platform: p.name, lines: this.shuffleLight(lines) };
  }

  /** Churn: `changed` share of existing DOIs with a new state, `removed` share removed, the rest new. */
  churnFile(fileIndex: number, records: number, changed = 0.3, removed = 0.03): Deposit {
    const p = this.platformOf(fileIndex);
    const nChanged = Math.round(records * changed);
    const nRemoved = Math.round(records * removed);
    const used = new Set<string>();
    const lines: string[] = [];
    for (const doi of this.pickLive(p, nChanged, used)) {
      const before = this.live.get(doi)!;
      let line = recordLine(p, doi, this.rand);
      while (line === before) line = recordLine(p, doi, this.rand);
      this.live.set(doi, line);
      lines.push(line);
    }
    lines.push(...this.removalLines(p, nRemoved, used));
    lines.push(...this.mintLines(p, records - nChanged - nRemoved));
    return { platform: p.name, lines: this.shuffleLight(lines) };
  }

  /** A re-deposit of live DOIs exactly as last sent (every record equal to the stored state). */
  unchangedFile(fileIndex: number, records: number): Deposit {
    const p = this.platformOf(fileIndex);
    const dois = this.pickLive(p, records, new Set());
    return { platform: p.name, lines: dois.map((d) => this.live.get(d)!) };
  }

  private mintLines(p: PlatformModel, n: number): string[] {
    const lines: string[] = [];
    // a file covers a few journals' new issues: 2-5 journals, a run of sequential DOIs in each
    const k = 2 + Math.floor(this.rand() * 4);
    const chosen = Array.from({ length: k }, () => p.journals[Math.floor(this.rand() * p.journals.length)]!);
    for (let i = 0; i < n; i++) {
      const j = chosen[i % k]!;
      const doi = j.mint(j.next++);
      p.minted.push(doi);
      const line = recordLine(p, doi, this.rand);
      this.live.set(doi, line);
      lines.push(line);
    }
    return lines;
  }

  private removalLines(p: PlatformModel, n: number, used: Set<string>): string[] {
    return this.pickLive(p, n, used).map((doi) => {
      this.live.delete(doi);
      return JSON.stringify({ doi, deleted: true });
    });
  }

  /** Distinct live DOIs of the platform, uniformly at random. */
  private pickLive(p: PlatformModel, n: number, used: Set<string>): string[] {
    const out: string[] = [];
    let guard = 0;
    while (out.length < n && guard++ < n * 50) {
      const doi = p.minted[Math.floor(this.rand() * p.minted.length)]!;
      if (used.has(doi) || !this.live.has(doi)) continue;
      used.add(doi);
      out.push(doi);
    }
    return out;
  }

  /** Publishers' exports are roughly in journal order, not sorted: interleave blocks a little. */
  private shuffleLight(lines: string[]): string[] {
    for (let i = lines.length - 1; i > 0; i -= 97) {
      const j = Math.floor(this.rand() * (i + 1));
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    }
    return lines;
  }
}
