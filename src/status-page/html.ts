/**
 * Escaping by construction: markup is written only through the `html` tagged template, which escapes every
 * value it is given unless the value is markup made by `html` itself. A value in a URL attribute (href, src, ...)
 * must be an HttpUrl, so only http(s) addresses ever become links; a value where an unquoted attribute or an
 * event handler would take it is refused. Templates are fixed text, so a misuse fails the first test that renders
 * it, never a reader's page.
 */

/** Markup that may be written as it is. Only `html` (and `raw`, for fixed text) make it. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/**
 * An absolute http(s) URL, normalised by the URL parser, or a path on this server made of percent-encoded
 * segments (`sitePath`): the only values a URL attribute takes.
 */
export class HttpUrl {
  private constructor(readonly href: string) {}

  /**
   * `text` as an http(s) URL, or undefined for anything else (javascript:, data:, relative, malformed, or with a
   * user name or password: `https://trusted.example@evil.example/` goes to evil.example, and has no place in a notice).
   */
  static parse(text: string): HttpUrl | undefined {
    if (text.length > 4096) return undefined;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return undefined;
    }
    const http = url.protocol === 'http:' || url.protocol === 'https:';
    return http && url.username === '' && url.password === '' ? new HttpUrl(url.href) : undefined;
  }

  /**
   * https://doi.org/<doi>, the DOI percent-encoded where a URL path needs it. Its slashes are kept, unless a
   * segment is `.` or `..`, which a browser would resolve away (`10.1/x/../y` is not `10.1/y`): then every slash
   * is encoded.
   */
  static ofDoi(doi: string): HttpUrl {
    const path = encodeURIComponent(doi);
    return new HttpUrl(`https://doi.org/${DOT_SEGMENT.test(doi) ? path : path.replace(/%2F/g, '/')}`);
  }

  /**
   * A path on this server (`/console/production/files/acme/x.jsonl.gz`), each segment percent-encoded: it names
   * this server's own pages, so it keeps the page's scheme and host. Undefined when a segment is `.` or `..`,
   * which a browser would resolve away. `query`, when given and not empty, follows as `?` and its form encoding.
   */
  static sitePath(segments: readonly string[], query?: URLSearchParams): HttpUrl | undefined {
    if (segments.some((s) => s === '.' || s === '..')) return undefined;
    const search = query?.toString();
    return new HttpUrl(`/${segments.map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`);
  }
}

const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

type Value = string | number | Html | HttpUrl | readonly Value[] | null | undefined | false;

type Slot = 'text' | 'url';
const slotsOf = new WeakMap<TemplateStringsArray, Slot[]>();
const URL_ATTRIBUTE = /\s(?:href|src|action|formaction|poster|cite|data|xlink:href)\s*=\s*["']$/i;
const UNQUOTED_ATTRIBUTE = /=\s*$/;
const EVENT_ATTRIBUTE = /\son[a-z]+\s*=\s*["']?[^"']*$/i;

/** What each value of a template may be, read once per template (a call site's strings are one object). */
function slots(strings: TemplateStringsArray): Slot[] {
  let known = slotsOf.get(strings);
  if (known) return known;
  known = strings.slice(0, -1).map((before, i) => {
    if (URL_ATTRIBUTE.test(before)) return 'url';
    if (UNQUOTED_ATTRIBUTE.test(before) || EVENT_ATTRIBUTE.test(before))
      throw new Error(
        `html template: value ${i} is in an unquoted or event-handler attribute (after ${JSON.stringify(before.slice(-40))})`,
      );
    return 'text';
  });
  slotsOf.set(strings, known);
  return known;
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  const kinds = slots(strings);
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (kinds[i] === 'url') {
      if (!(v instanceof HttpUrl))
        throw new Error(`html template: value ${i} is in a URL attribute and is not an HttpUrl`);
      out += escapeHtml(v.href);
    } else out += render(v);
    out += strings[i + 1]!;
  }
  return new Html(out);
}

/** Fixed markup held in a constant (the style sheet): never call it with data. */
export function raw(fixed: string): Html {
  return new Html(fixed);
}

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (v instanceof HttpUrl) return escapeHtml(v.href);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return escapeHtml(v);
  let out = '';
  for (const item of v) out += render(item);
  return out;
}

// control characters other than tab, newline and carriage return have no place in HTML text: shown as U+FFFD
const SPECIAL = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const SPECIALS = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIALS, (c) => ENTITIES[c] ?? '&#xFFFD;') : s;
}
