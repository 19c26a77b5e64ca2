import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { REPO } from '../support/fixtures.ts';

/**
 * The repository stands alone: a user clones it and nothing else. No file of it reads or links a path outside
 * it (our reference folder beside the checkout included), and every relative link in its Markdown resolves to a
 * file inside it. `make standalone` runs the whole suite in a fresh clone with nothing beside it.
 */

const SCANNED = [
  'src',
  'test',
  'bench',
  'scripts',
  'examples',
  'docs',
  'conf',
  'Makefile',
  'README.md',
  'package.json',
  '.ci',
  'doi-holdings',
];
const TEXT = /\.(ts|js|md|toml|json|service|csv)$|^(Makefile|run|doi-holdings)$/;

function files(): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path)) if (name !== 'node_modules') walk(join(path, name));
    } else if (TEXT.test(path.split(sep).pop()!)) out.push(path);
  };
  for (const top of SCANNED) walk(join(REPO, top));
  return out;
}

// built from pieces so that this file does not match itself
const SHARED = 'sha' + 'red';
const OUTSIDE = [
  new RegExp(`\\.\\./${SHARED}\\b`),
  new RegExp(`\\b${SHARED}/(data|spec|DESIGN|PERFORMANCE|ANCHORS|STYLE|hooks)\\b`),
  new RegExp(`['"]\\.\\.['"],\\s*['"]${SHARED}['"]`),
  /join\(REPO,\s*['"]\.\.['"]/,
];

describe('the repository stands alone', () => {
  const all = files();

  test('the scan sees the source, the tests, the benchmarks and the documents', () => {
    const rel = all.map((f) => relative(REPO, f));
    for (const expected of [
      'src/main.ts',
      'Makefile',
      'README.md',
      'bench/ingest.ts',
      'examples/platform.ts',
      'doi-holdings',
      'test/support/fixtures.ts',
      'test/fixtures/PROVENANCE.md',
    ])
      expect(rel).toContain(expected);
  });

  test('no file names a path outside the repository', () => {
    const hits: string[] = [];
    for (const f of all) {
      if (f.endsWith('.csv')) continue;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (OUTSIDE.some((re) => re.test(line)))
            hits.push(`${relative(REPO, f)}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(hits).toEqual([]);
  });

  test('every relative Markdown link resolves to a file inside the repository', () => {
    const broken: string[] = [];
    for (const f of all.filter((p) => p.endsWith('.md'))) {
      for (const [, target] of readFileSync(f, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const path = resolve(dirname(f), target!.split('#')[0]!);
        if (!path.startsWith(REPO + sep) || !existsSync(path)) broken.push(`${relative(REPO, f)}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('the data the tests read is inside the repository, with its provenance beside it', () => {
    const fixtures = join(REPO, 'test', 'fixtures');
    expect(existsSync(join(fixtures, 'retraction_watch_sample.csv'))).toBe(true);
    expect(readFileSync(join(fixtures, 'PROVENANCE.md'), 'utf8')).toContain('retraction_watch_sample.csv');
  });
});
