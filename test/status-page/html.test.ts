import { describe, expect, test } from 'bun:test';
import { escapeHtml, HttpUrl, html } from '../../src/status-page/html.ts';

/** The escaping template layer of the status page: every value is text unless it is markup `html` made. */

describe('html`...`', () => {
  test('escapes every value: markup characters, quotes, and control characters as U+FFFD', () => {
    const v = `<script>alert("x")</script> & 'q' \u0000\u0007\u007f\ttab\nline`;
    expect(html`<p>${v}</p>`.text).toBe(
      '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; &#xFFFD;&#xFFFD;&#xFFFD;\ttab\nline</p>',
    );
    expect(html`<p title="${v}">x</p>`.text).not.toContain('"x"');
  });

  test('markup made by html is kept; arrays are joined; null, undefined and false write nothing; numbers as text', () => {
    const items = ['a<', 'b>'].map((s) => html`<li>${s}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.text).toBe('<ul><li>a&lt;</li><li>b&gt;</li></ul>0');
  });

  test('a plain string is never markup, however it looks', () => {
    const looksLikeMarkup = '<b>bold</b>';
    expect(html`${looksLikeMarkup}`.text).toBe('&lt;b&gt;bold&lt;/b&gt;');
  });

  test('a URL attribute takes only an HttpUrl: a string there is refused', () => {
    expect(() => html`<a href="${'https://example.org/'}">x</a>`).toThrow('not an HttpUrl');
    expect(() => html`<img src='${'x'}'>`).toThrow('not an HttpUrl');
    expect(html`<a href="${HttpUrl.parse('https://example.org/a b?q="1"')!}">x</a>`.text).toBe(
      '<a href="https://example.org/a%20b?q=%221%22">x</a>',
    );
  });

  test('values in unquoted attributes or event handlers are refused', () => {
    expect(() => html`<p class=${'x onmouseover=alert(1)'}>`).toThrow('unquoted or event-handler');
    expect(() => html`<p onclick="${'alert(1)'}">`).toThrow('unquoted or event-handler');
  });
});

describe('HttpUrl', () => {
  test('only absolute http and https URLs are links', () => {
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,<script>1</script>',
      'vbscript:x',
      'file:///etc/passwd',
      '//evil.example/x',
      '/relative',
      'not a url',
      'ftp://x.example/',
      '',
    ])
      expect(HttpUrl.parse(bad)).toBeUndefined();
    expect(HttpUrl.parse('http://retractionwatch.com/2015/01/19/x/')?.href).toBe(
      'http://retractionwatch.com/2015/01/19/x/',
    );
    expect(HttpUrl.parse('HTTPS://Doi.org/10.1/x')?.href).toBe('https://doi.org/10.1/x');
  });

  test('a DOI link percent-encodes what a path cannot hold and keeps the slashes', () => {
    expect(HttpUrl.ofDoi('10.1000/ABC(12)x;y').href).toBe('https://doi.org/10.1000/ABC(12)x%3By');
    expect(HttpUrl.ofDoi('10.1000/a"><script>?#%').href).toBe('https://doi.org/10.1000/a%22%3E%3Cscript%3E%3F%23%25');
    expect(HttpUrl.ofDoi('10.1000/x/y').href).toBe('https://doi.org/10.1000/x/y');
  });

  test('a DOI with a . or .. segment keeps them: its slashes are encoded so a browser cannot resolve them away', () => {
    for (const doi of ['10.1234/x/../y', '10.1234/./z', '10.1234/a/..', '10.1234/..'])
      expect(decodeURIComponent(new URL(HttpUrl.ofDoi(doi).href).pathname)).toBe(`/${doi}`);
    expect(HttpUrl.ofDoi('10.1234/a..b/c').href).toBe('https://doi.org/10.1234/a..b/c');
  });

  test("a site path: this server's own page, each segment percent-encoded; none with a . or .. segment", () => {
    expect(HttpUrl.sitePath(['console', 'production', 'files', 'acme', 'a b?#"<>.jsonl.gz'])?.href).toBe(
      '/console/production/files/acme/a%20b%3F%23%22%3C%3E.jsonl.gz',
    );
    expect(HttpUrl.sitePath(['console', 'x:y', '//evil.example'])?.href).toBe('/console/x%3Ay/%2F%2Fevil.example');
    const query = new URLSearchParams({ format: 'html', after: 'a b&c' });
    expect(HttpUrl.sitePath(['v2.2', 'deposits'], query)?.href).toBe('/v2.2/deposits?format=html&after=a+b%26c');
    expect(HttpUrl.sitePath(['x'], new URLSearchParams())?.href).toBe('/x');
    for (const segments of [['console', '..', 'x'], ['.'], ['a', '..']])
      expect(HttpUrl.sitePath(segments)).toBeUndefined();
    expect(html`<a href="${HttpUrl.sitePath(['console', '"><b>'])}">x</a>`.text).toBe(
      '<a href="/console/%22%3E%3Cb%3E">x</a>',
    );
  });
});

test('escapeHtml leaves text without special characters as it is (no copy)', () => {
  const s = '10.1234/plain-doi_1.2';
  expect(escapeHtml(s)).toBe(s);
});
