/**
 * The general DOI rule and the DOI key (docs/interface.md, "Depositing holdings"; docs/design.md, "Store layout").
 * Deposits must use the bare `10.` form; the APIs also accept `doi:` and `https://doi.org/` forms, which
 * `readDoiForm` makes bare. The fast path for plain ASCII DOIs (plain.ts) is held to this rule by its tests.
 */

export const MAX_DOI_BYTES = 1024;

/**
 * The most DOIs one request of the Entitlement or Updates API holds (docs/interface.md): both APIs' schemas, and the
 * config's default DOI burst (one whole request), read this one figure.
 */
export const MAX_DOIS_PER_REQUEST = 100;

const DOI_SHAPE = /^10\.[0-9]{4,9}\/./s;
// Whitespace (Z), control (Cc) and format (Cf) characters are never part of a DOI: NBSP, U+2028, U+FEFF, U+200B...
const FORBIDDEN = /[\p{Z}\p{Cc}\p{Cf}]/u;

export type DoiProblem = 'not a DOI: expected 10.<4-9 digit registrant>/<suffix>' | string;

/** Returns why `doi` is not an acceptable bare DOI, or undefined when it is. */
export function doiProblem(doi: string): DoiProblem | undefined {
  if (!DOI_SHAPE.test(doi)) return 'not a DOI: expected 10.<4-9 digit registrant>/<non-empty suffix>';
  if (!doi.isWellFormed()) return 'contains a lone UTF-16 surrogate';
  const bad = FORBIDDEN.exec(doi);
  if (bad) return `contains a whitespace, control or format character (U+${codePoint(bad[0])}) at index ${bad.index}`;
  if (doi.length * 3 > MAX_DOI_BYTES && Buffer.byteLength(doi, 'utf8') > MAX_DOI_BYTES)
    return `longer than ${MAX_DOI_BYTES} bytes in UTF-8`;
  return undefined;
}

/** The store key of a DOI: ASCII letters lower-cased, nothing else folded. */
export function doiKey(doi: string): string {
  return HAS_UPPER.test(doi) ? doi.replace(UPPER_RUNS, (s) => s.toLowerCase()) : doi;
}
const HAS_UPPER = /[A-Z]/;
const UPPER_RUNS = /[A-Z]+/g;

const DOI_PREFIX = /^doi:\s*/i;
const URL_PREFIX = /^https?:\/\/(dx\.)?doi\.org\//i;

/** A DOI as an API or a source gives it, made bare: the bare DOI, or why the form given is broken. */
export type DoiForm = { bare: string; problem?: undefined } | { problem: DoiProblem };

/**
 * API and source input: the bare, `doi:10...` and `https://doi.org/10...` forms (`http://`, `dx.doi.org`, any
 * case), trimmed, to the bare DOI, checked by doiProblem. A doi.org link is a URL, so its path is percent-decoded
 * (`10.1155%2F2008%2F961753` is `10.1155/2008/961753`); the bare and `doi:` forms are taken as they are.
 */
export function readDoiForm(input: string): DoiForm {
  // `doi:` before a link too (`doi:https://doi.org/10...`), as taken before links were decoded
  const s = input.trim().replace(DOI_PREFIX, '');
  const url = URL_PREFIX.exec(s);
  let bare = url ? s.slice(url[0].length) : s;
  if (url && bare.includes('%')) {
    const decoded = urlPathDecoded(bare);
    if (decoded.problem !== undefined) return decoded;
    bare = decoded.bare;
  }
  const problem = doiProblem(bare);
  return problem === undefined ? { bare } : { problem };
}

/** A doi.org link's path percent-decoded as UTF-8 (`+` stays `+`: a path is not a query). */
function urlPathDecoded(path: string): DoiForm {
  try {
    return { bare: decodeURIComponent(path) };
  } catch {
    return { problem: undecodable(path) };
  }
}

/** Where and why a path that decodeURIComponent refused does not percent-decode. */
function undecodable(path: string): string {
  const lone = /%(?![0-9A-Fa-f]{2})/.exec(path);
  if (lone)
    return `the doi.org link has a malformed percent-encoding at index ${lone.index} of its DOI: a "%" must be followed by two hex digits (a "%" in a DOI is sent as %25)`;
  for (const run of path.matchAll(/(?:%[0-9A-Fa-f]{2})+/g))
    try {
      decodeURIComponent(run[0]);
    } catch {
      return `the doi.org link's percent-encoding ${run[0]} at index ${run.index} of its DOI does not decode to UTF-8 text`;
    }
  return "the doi.org link's DOI does not percent-decode";
}

function codePoint(ch: string): string {
  return ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}
