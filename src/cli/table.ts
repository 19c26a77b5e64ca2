/**
 * Tables for people at a terminal (--stats, --failures, --report, --validate): aligned columns, numbers to the
 * right, long cells cut to the terminal's width. Off a terminal, or with --json, those commands print the lines
 * scripts read; that choice is made here, once.
 */

export type Cell = string | number | boolean | null | undefined;

/** How the listing commands print: `tables` with the terminal's width, or the lines scripts read. */
export type Listing = { tables: true; width: number } | { tables: false };

/** Tables only when stdout is a terminal and --json was not asked for: pipes, files and scripts keep their lines. */
export function listingFor(
  jsonAsked: boolean,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): Listing {
  if (stdout.isTTY !== true || jsonAsked) return { tables: false };
  // a terminal that tells no width (some pseudo-terminals) gets the classic 80
  return { tables: true, width: stdout.columns && stdout.columns > 0 ? stdout.columns : 80 };
}

const GAP = '  ';
/** no column is cut narrower than this, whatever the width: a few characters still say which row is which */
const MIN_COLUMN = 4;
const ELLIPSIS = '…';

/**
 * The lines of a table: a header, a rule, then one line per row. Columns are as wide as their widest cell; when the
 * whole is wider than `width`, the widest columns give way first, and cells cut to their column end in "…". A column
 * whose cells are all numbers (or empty) is aligned to the right, its header too.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly Cell[])[], width: number): string[] {
  const text = rows.map((row) => header.map((_, i) => cellText(row[i])));
  const numeric = header.map((_, i) =>
    rows.every((row) => typeof row[i] === 'number' || row[i] === undefined || row[i] === null),
  );
  const widths = header.map((h, i) => Math.max(Bun.stringWidth(h), ...text.map((row) => Bun.stringWidth(row[i]!))));
  fitTo(widths, width - GAP.length * (header.length - 1));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => pad(cut(c, widths[i]!), widths[i]!, numeric[i]!))
      .join(GAP)
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)];
}

/**
 * Key and value rows of a nested object, its paths dotted (`ledger.applied`): --stats and --report show one record
 * this way. Arrays are given as their JSON.
 */
export function fieldRows(value: Record<string, unknown>, prefix = ''): [string, Cell][] {
  const rows: [string, Cell][] = [];
  for (const [name, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const inner = fieldRows(v as Record<string, unknown>, path);
      rows.push(...(inner.length > 0 ? inner : [[path, '{}'] as [string, Cell]]));
    } else rows.push([path, Array.isArray(v) ? JSON.stringify(v) : (v as Cell)]);
  }
  return rows;
}

function cellText(c: Cell): string {
  if (c === undefined || c === null) return '';
  // a line break or tab in a publisher's text would break the rows apart; a C1 control (\u009b starts a terminal
  // escape) or a bidirectional override would let it rewrite what the terminal shows
  return String(c).replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, ' ');
}

/** Narrows the widest columns, one character at a time, until they fit `room` or every one is at its minimum. */
function fitTo(widths: number[], room: number): void {
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > room) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if (widths[i]! > widths[widest]!) widest = i;
    if (widths[widest]! <= MIN_COLUMN) return;
    widths[widest]!--;
    total--;
  }
}

function cut(text: string, width: number): string {
  if (Bun.stringWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    used += Bun.stringWidth(ch);
    if (used > width - 1) break;
    out += ch;
  }
  return out + ELLIPSIS;
}

function pad(text: string, width: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, width - Bun.stringWidth(text)));
  return right ? fill + text : text + fill;
}
