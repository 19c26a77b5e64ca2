/** Dates of update information as ISO 8601 at the precision the source gives (docs/interface.md, "Where update information comes from"). */

const RW_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?$/;
const ISO_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** `M/D/YYYY H:MM` (Retraction Watch) or an ISO date/date-time, to `YYYY-MM-DD` (or `YYYY-MM`, `YYYY`). */
export function parseSourceDate(raw: string): string | undefined {
  const s = raw.trim();
  const rw = RW_DATE.exec(s);
  if (rw) return isoOf(Number(rw[3]), Number(rw[1]), Number(rw[2]));
  const iso = ISO_DATE.exec(s);
  if (iso)
    return isoOf(
      Number(iso[1]),
      iso[2] === undefined ? undefined : Number(iso[2]),
      iso[3] === undefined ? undefined : Number(iso[3]),
    );
  return undefined;
}

/** Crossref `date-parts` ([[2018, 4, 15]], [[2018, 4]], [[2018]]) at their precision. */
export function fromDateParts(parts: unknown): string | undefined {
  const first = Array.isArray(parts) ? parts[0] : undefined;
  if (!Array.isArray(first) || first.length === 0) return undefined;
  const [y, m, d] = first.map((v) => (typeof v === 'string' ? Number(v) : v)) as (number | undefined | null)[];
  if (typeof y !== 'number' || !Number.isInteger(y)) return undefined;
  return isoOf(
    y,
    typeof m === 'number' ? m : undefined,
    typeof d === 'number' && typeof m === 'number' ? d : undefined,
  );
}

/**
 * ISO dates at any precision (YYYY, YYYY-MM, YYYY-MM-DD) compared at the coarser of the two: `2020-05` and
 * `2020-05-14` are the same date (which came first is not known).
 */
export function compareSourceDates(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  const [x, y] = [a.slice(0, n), b.slice(0, n)];
  return x < y ? -1 : x > y ? 1 : 0;
}

function isoOf(year: number, month?: number, day?: number): string | undefined {
  if (!Number.isInteger(year) || year < 1000 || year > 9999) return undefined;
  if (month === undefined) return String(year);
  if (!Number.isInteger(month) || month < 1 || month > 12) return undefined;
  const mm = String(month).padStart(2, '0');
  if (day === undefined) return `${year}-${mm}`;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (!Number.isInteger(day) || day < 1 || day > daysInMonth) return undefined;
  return `${year}-${mm}-${String(day).padStart(2, '0')}`;
}
