import { readFileSync } from 'node:fs';

/**
 * Probes of a process (bench/harvest.ts): its CPU time, its memory from /proc, and the longest answer time of a
 * server's /healthz (how long its event loop was held).
 */

/** CPU seconds (user + system) a process has used so far (/proc/PID/stat, in clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/** cpuSeconds, user and system apart. */
export function cpuSplit(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** A field of this process's /proc/self/status (or another's: `pid`) in kB (VmRSS, VmHWM, RssAnon ...). */
export const statusKb = (field: string, pid: number | 'self' = 'self') =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/**
 * A worker thread polling this process's RssAnon (or another's: `pid`) every 20 ms: it keeps sampling while the
 * main thread is held. A process that has ended keeps its last peak.
 */
export function rssAnonPeak(pid: number | 'self' = 'self'): { peakKb(): Promise<number>; stop(): void } {
  const code = `const { readFileSync } = require('node:fs'); let peak = 0;
const read = () => { try { return readFileSync('/proc/${pid}/status', 'utf8'); } catch { return ''; } };
const poll = () => { const m = /RssAnon:\\s+(\\d+)/.exec(read()); if (m) peak = Math.max(peak, Number(m[1])); };
poll(); setInterval(poll, 20); self.onmessage = () => postMessage(peak);`;
  const w = new Worker(URL.createObjectURL(new Blob([code], { type: 'application/javascript' })));
  return {
    peakKb: () =>
      new Promise<number>((r) => ((w.onmessage = (e: MessageEvent) => r(e.data as number)), w.postMessage(0))),
    stop: () => w.terminate(),
  };
}

/** GET /healthz one after another (20 ms apart) until stop(): the longest answer time, ms. */
export function pauseProbe(url: string): { stop(): Promise<number> } {
  let max = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${url}/healthz`).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
      max = Math.max(max, performance.now() - t);
      await Bun.sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return max;
    },
  };
}

/** The machine's CPU seconds so far by kind, all cores summed (/proc/stat's cpu line, in clock ticks of 1/100 s). */
export function machineCpu(): { user: number; nice: number; system: number; idle: number; other: number } {
  const [user, nice, system, idle, ...rest] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    user: user! / 100,
    nice: nice! / 100,
    system: system! / 100,
    idle: idle! / 100,
    other: rest.slice(0, 4).reduce((a, b) => a + b, 0) / 100,
  };
}
