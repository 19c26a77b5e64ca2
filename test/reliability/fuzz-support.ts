import fc from 'fast-check';

/**
 * Shared by the property-based fuzz tests (test/reliability/fuzz-*.test.ts, docs/reliability.md). Every property
 * runs a bounded number of cases from one seed per test process, and prints both, so a failure can be replayed:
 *
 *   FUZZ_SEED=<seed> bun test test/reliability/fuzz-deposit.test.ts            the same cases again
 *   FUZZ_SEED=<seed> FUZZ_PATH=<path> bun test ...                              only the shrunk counterexample
 *   FUZZ_RUNS=<n> bun test ...                                                  n cases for every property
 *
 * fast-check's own failure message gives the seed and path of the failing case.
 */

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, not ${JSON.stringify(raw)}`);
  return n;
}

/** One seed for every property of this process: FUZZ_SEED, else a fresh one (printed). */
export const FUZZ_SEED = envInt('FUZZ_SEED') ?? (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
const RUNS = envInt('FUZZ_RUNS');
const PATH = process.env.FUZZ_PATH || undefined;

/** The parameters of one property: `defaultRuns` unless FUZZ_RUNS says otherwise. Prints the seed and count. */
export function fuzzParams<T>(name: string, defaultRuns: number): fc.Parameters<T> {
  const numRuns = RUNS ?? defaultRuns;
  console.log(
    `fuzz ${name}: seed ${FUZZ_SEED}, ${numRuns} runs (replay: FUZZ_SEED=${FUZZ_SEED}${PATH ? ` FUZZ_PATH=${PATH}` : ''})`,
  );
  return { seed: FUZZ_SEED, numRuns, ...(PATH ? { path: PATH } : {}) };
}

/** Checks a property with fuzzParams, its name in the failure message. */
export async function fuzz<T>(
  name: string,
  defaultRuns: number,
  property: fc.IProperty<T> | fc.IAsyncProperty<T>,
): Promise<void> {
  try {
    await fc.assert(property as fc.IAsyncProperty<T>, fuzzParams<T>(name, defaultRuns));
  } catch (e) {
    (e as Error).message =
      `fuzz ${name} failed (replay: FUZZ_SEED=${FUZZ_SEED} and the path below in FUZZ_PATH)\n${(e as Error).message}`;
    throw e;
  }
}

/** Characters that break naive text handling: quotes, escapes, controls, separators, BOM, astral, combining. */
export const AWKWARD_CHARS = [
  '"',
  '\\',
  '/',
  ',',
  ';',
  ':',
  '{',
  '}',
  '[',
  ']',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00e9',
  'e\u0301',
  '\u0130',
  '\u212a',
  '\u2028',
  '\u2029',
  '\u200b',
  '\ufeff',
  '\ufffd',
  '\u6f22',
  '\u{1f600}',
  '\uff10',
  'A',
  'Z',
  'a',
  'z',
  '0',
  '9',
  '%22',
  '+',
  '.',
  '-',
  '_',
  '~',
];

/** A lone UTF-16 surrogate (half of a pair), which UTF-8 cannot carry. */
export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

/** A string of awkward characters and plain ASCII; `lone`: lone surrogates too. */
export function awkwardString(maxLength = 12, opts: { lone?: boolean } = {}): fc.Arbitrary<string> {
  const unit = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...AWKWARD_CHARS) },
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  );
  return fc.string({ unit: opts.lone ? fc.oneof({ weight: 8, arbitrary: unit }, loneSurrogate) : unit, maxLength });
}

/** Characters a valid DOI suffix may hold beyond plain ASCII: quotes, escapes, accents, CJK, astral, case traps. */
const DOI_SUFFIX_CHARS = [
  '"',
  '\\',
  '/',
  '\u00e9',
  'e\u0301',
  '\u0130',
  '\u212a',
  '\u00df',
  '\u6f22',
  '\u{1f600}',
  '\uff10',
  '%22',
  '<',
  '>',
  '#',
  '?',
];

/** A bare DOI the interface takes: 4 to 9 digits, a suffix without whitespace, control or format characters. */
export function validDoi(): fc.Arbitrary<string> {
  const unit = fc.oneof({ weight: 6, arbitrary: fc.stringMatching(/^[!-~]$/) }, fc.constantFrom(...DOI_SUFFIX_CHARS));
  return fc
    .tuple(fc.stringMatching(/^[0-9]{4,9}$/), fc.string({ unit, minLength: 1, maxLength: 24 }))
    .map(([r, s]) => `10.${r}/${s}`);
}

/**
 * DOIs in every form, with whether the interface takes each as a bare deposit DOI (docs/interface.md, "The
 * deposit record": `10.`, 4 to 9 ASCII digits, `/`, a suffix of at least one character; no whitespace, control or
 * format character, no lone surrogate; at most 1,024 bytes of UTF-8). The validity is stated by the generator,
 * not computed by the code under test.
 */
export function doiForms(): fc.Arbitrary<string> {
  const registrant = fc.oneof(
    fc.stringMatching(/^[0-9]{4,9}$/),
    fc.constantFrom('5555', '123456789', '0000', '123', '1234567890', '', '12a4', '\uff15\uff15\uff15\uff15'),
  );
  const suffix = fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9._;()/:-]{1,20}$/) },
    { weight: 3, arbitrary: awkwardString(10, { lone: true }) },
    fc
      .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.option(loneSurrogate))
      .map(([s, l]) => s + (l ?? '')),
    fc.constantFrom(
      'x'.repeat(1016),
      'x'.repeat(1017),
      '\u6f22'.repeat(338),
      '\u6f22'.repeat(339),
      '\u{1f600}'.repeat(254),
      '\u{1f600}'.repeat(255),
    ),
  );
  const bare = fc.tuple(registrant, suffix).map(([r, s]) => `10.${r}/${s}`);
  return fc.oneof(
    { weight: 4, arbitrary: validDoi() },
    { weight: 6, arbitrary: bare },
    fc
      .tuple(
        fc.constantFrom(
          'doi:',
          'DOI: ',
          'https://doi.org/',
          'HTTP://DX.DOI.ORG/',
          'http://dx.doi.org/',
          ' ',
          '\u00a0',
          'urn:',
          'https://doi.org/doi:',
        ),
        bare,
        fc.constantFrom('', ' ', '\t', '\n', '\u3000'),
      )
      .map(([p, d, s]) => p + d + s),
    fc.constantFrom('', '10.', '10./x', '10.5555', '10.5555/', '11.5555/x', '10,5555/x', 'not a doi', '10.5555\\/x'),
  );
}

/** Whether `s` is a bare deposit DOI, from the interface's words (not from src/doi). */
export function isBareDoi(s: string): boolean {
  return (
    /^10\.[0-9]{4,9}\/./su.test(s) &&
    s.isWellFormed() &&
    !/[\p{Z}\p{Cc}\p{Cf}]/u.test(s) &&
    Buffer.byteLength(s, 'utf8') <= 1024
  );
}

/** The DOI key: ASCII letters lower-cased, nothing else folded (docs/interface.md: "without regard to the case of ASCII letters"). */
export function keyOf(doi: string): string {
  return doi.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** A DOI as an API reads one (docs/interface.md, "Updates API", "Request"): the bare DOI, or undefined when it is not one. */
export function apiDoi(sent: string): string | undefined {
  const s = sent.trim().replace(/^doi:\s*/i, '');
  const url = /^https?:\/\/(dx\.)?doi\.org\//i.exec(s);
  if (!url) return isBareDoi(s) ? s : undefined;
  // a doi.org link is a URL: its DOI is percent-decoded, and one that does not decode (a lone %, not UTF-8) is none
  let bare: string;
  try {
    bare = decodeURIComponent(s.slice(url[0].length));
  } catch {
    return undefined;
  }
  return isBareDoi(bare) ? bare : undefined;
}

/** Splits bytes into chunks at the given cut points (any positions: inside characters, between \r and \n). */
export function chunksOf(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

export async function* streamOf<T extends Uint8Array | string>(chunks: readonly T[]): AsyncGenerator<T> {
  for (const c of chunks) yield c;
}
