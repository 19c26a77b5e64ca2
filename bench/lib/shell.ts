/** Runs a command; its exit code and its stdout and stderr together. */
export async function sh(cmd: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

/** wrk (Debian's package), installed when missing: the HTTP benchmarks' load generator. */
export async function ensureWrk(): Promise<void> {
  if ((await sh(['sh', '-c', 'command -v wrk'])).code === 0) return;
  console.log('installing wrk from Debian packages ...');
  const r = await sh(['sh', '-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk']);
  if (r.code !== 0) throw new Error(`cannot install wrk: ${r.out.slice(-500)}`);
}
