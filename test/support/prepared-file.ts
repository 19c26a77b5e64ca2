import { type ParsedDeposit, parseDepositText } from '../../src/deposit/index.ts';
import type { PreparedFile } from '../../src/store/index.ts';

let seq = 0;

function parsed(lines: object[]): ParsedDeposit {
  const p = parseDepositText(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')));
  if ('code' in p) throw new Error(p.message);
  return p;
}

/** A deposit file of `lines` as the ingestor hands it to the store: read, parsed, a unique key and content. */
export function preparedFile(lines: object[], opts: { platform?: string; time?: number } = {}): PreparedFile {
  seq++;
  const platform = opts.platform ?? 'acme';
  return {
    key: `${platform}/00000000-0000-4000-8000-${String(seq).padStart(12, '0')}.jsonl.gz`,
    platform,
    size: 100,
    hash: `hash-${seq}`,
    lastModified: opts.time ?? 1_700_000_000_000 + seq * 1000,
    parsed: parsed(lines),
    timings: { readMs: 0, parseMs: 0 },
    tries: 1,
  };
}
