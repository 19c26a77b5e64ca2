import { join } from 'node:path';
import { REPO } from './ingest-data.ts';
import { rssAnonPeak, statusKb } from './process-probes.ts';
import { atRest, indexesComplete, type Started, startProcess } from './processes.ts';

/**
 * The daemon (`bun src/main.ts --config CONFIG`, its own process) started and followed to rest: ms from spawn to
 * the port (its daemon.started line, looked for every 5 ms), to the first 200 of GET /healthz (polled every 5 ms),
 * to the entitlement index complete (/healthz says so for every environment; polled every 20 ms) with the index's
 * own figures from its entitlement.index_built line, and its anonymous RSS (RssAnon: heap and malloc, without the
 * store's mapped pages) at rest and at its peak, polled every 20 ms by a worker from the port's opening on. The
 * poller goes on until stop(), so a later peak (under load) is seen too.
 */

export interface MeasuredDaemon extends Started {
  listenMs: number;
  healthzMs: number;
  indexMs: number;
  /** the entitlement.index_built line: DOIs, the build's ms on its worker, the index's bytes as it counts them */
  index: { dois: number; ms: number; bytes: number } | undefined;
  restAnonKb: number;
  /** the peak from the port's opening to rest */
  startPeakAnonKb: number;
  /** the peak so far */
  peakAnonKb(): Promise<number>;
}

export async function startMeasured(
  config: string,
  o: { timeoutMs: number; env?: Record<string, string> },
): Promise<MeasuredDaemon> {
  const t0 = performance.now();
  const daemon = await startProcess(
    [process.execPath, join(REPO, 'src/main.ts'), '--config', config],
    (out) => /"url":"([^"]+)"/.exec(out)?.[1],
    o.env,
    5,
  );
  const listenMs = performance.now() - t0;
  const anon = rssAnonPeak(daemon.pid);
  const stop = daemon.stop;
  const measured: MeasuredDaemon = Object.assign(daemon, {
    listenMs,
    healthzMs: 0,
    indexMs: 0,
    index: undefined,
    restAnonKb: 0,
    startPeakAnonKb: 0,
    peakAnonKb: () => anon.peakKb(),
    async stop() {
      anon.stop();
      await stop();
    },
  });
  try {
    while (
      (await fetch(`${daemon.url}/healthz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (performance.now() - t0 > o.timeoutMs)
        throw new Error(`/healthz did not answer 200 in ${o.timeoutMs / 1000} s: ${daemon.output().slice(-2000)}`);
      await Bun.sleep(5);
    }
    measured.healthzMs = performance.now() - t0;
    await indexesComplete(daemon.url, o.timeoutMs, 20);
    measured.indexMs = performance.now() - t0;
    const built = /^.*"event":"entitlement\.index_built".*$/m.exec(daemon.output());
    measured.index = built ? (JSON.parse(built[0]) as { dois: number; ms: number; bytes: number }) : undefined;
    await atRest(daemon.pid, o.timeoutMs);
    measured.restAnonKb = statusKb('RssAnon', daemon.pid);
    measured.startPeakAnonKb = await anon.peakKb();
    return measured;
  } catch (e) {
    await measured.stop();
    throw e;
  }
}
