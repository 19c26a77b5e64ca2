/**
 * How a title (and a journal or author name) is compared with Crossref's: one rule each, used by the match and
 * by the lookup cache's key alike. Crossref titles sometimes carry markup (`<i>E. coli</i>`, `H<sub>2</sub>O`)
 * and character references (`&amp;`): both are set aside before any comparison.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The text of a title without markup: tags removed (`H<sub>2</sub>O` is `H2O`), character references read. */
function textOf(title: string): string {
  return title.replace(/<[^<>]*>/g, '').replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/**
 * The normalised form: markup set aside, Unicode NFKC (compatibility forms folded: `ﬁ` is `fi`, full-width
 * letters are letters), lower case, every run of punctuation, symbols and whitespace one space, trimmed.
 * "The Effects of Vitamin C: a Trial" and "the effects of vitamin c -- a trial" are the same title.
 */
export function normaliseTitle(title: string): string {
  return textOf(title)
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}\s]+/gu, ' ')
    .trim();
}

/**
 * The form `exactTitleMatch` compares: the same characters, letter case and punctuation included (Unicode NFC,
 * so that one accented letter written two ways is one). Only what is no part of the words is set aside:
 * Crossref's markup, and runs of whitespace (one space; none at the ends).
 */
export function exactTitle(title: string): string {
  return textOf(title).normalize('NFC').replace(/\s+/gu, ' ').trim();
}

/**
 * An author's family name as an integrator may write it, normalised: "Jane Doe" and "Doe, Jane" both give
 * "doe". Crossref holds authors as `{given, family}`, so the family name is what can be compared.
 */
export function familyName(author: string): string {
  const comma = author.indexOf(',');
  const name = comma >= 0 ? author.slice(0, comma) : (author.trim().split(/\s+/u).pop() ?? '');
  return normaliseTitle(name);
}
