/**
 * `make build`: the single executable (bun build --compile), with the prepare, index-build and updates-index workers as more entrypoints.
 * lmdb-js finds its native addon at run time by searching folders, which finds nothing inside a compiled
 * binary; this build replaces that search with a static require of the addon for this platform, so Bun embeds
 * the .node file in the executable. The git commit built from is written in as DOI_HOLDINGS_COMMIT (src/base/build-commit.ts):
 * the binary has no checkout to ask at run time.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { gitCommit } from '../src/base/build-commit.ts';

const REPO = join(import.meta.dir, '..');
const outfile = process.argv[2] ?? join(REPO, 'dist/doi-holdings');
const libc =
  process.report?.getReport &&
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime
    ? 'glibc'
    : 'musl';
const addon = `@lmdb/lmdb-${process.platform}-${process.arch}/node.napi.${libc}.node`;
const commit = gitCommit(REPO);

const result = await Bun.build({
  // program.ts is an entrypoint of its own, loaded by main.ts at run time: main.ts lowers --backup and --dump first
  entrypoints: [
    join(REPO, 'src/main.ts'),
    join(REPO, 'src/program.ts'),
    join(REPO, 'src/ingest/prepare-worker.ts'),
    join(REPO, 'src/entitlement/holdings-index/index-build-worker.ts'),
    join(REPO, 'src/store/updates/read-worker.ts'),
  ],
  compile: { outfile },
  minify: true,
  define: { DOI_HOLDINGS_COMMIT: JSON.stringify(commit) },
  plugins: [
    {
      name: 'lmdb-static-addon',
      setup(build) {
        build.onLoad({ filter: /[\\/]lmdb[\\/]native\.js$/ }, async (args) => {
          const source = await Bun.file(args.path).text();
          const patched = source.replace(
            'export let nativeAddon = loadNAPI(dirName);',
            `export let nativeAddon = require(${JSON.stringify(addon)});`,
          );
          if (patched === source) throw new Error(`lmdb's native.js changed: cannot embed ${addon}`);
          return { contents: patched, loader: 'js' };
        });
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(
  `built ${outfile} from commit ${commit}: ${(statSync(outfile).size / 1e6).toFixed(1)} MB (lmdb addon ${addon} embedded)`,
);
