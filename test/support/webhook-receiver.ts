import { Webhook } from 'standardwebhooks';

/** One delivery a receiver took, its signature verified by the `standardwebhooks` package (not our code). */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: { type: string; doi: string; updates: { updateType: string }[]; previous: { updateType: string }[] };
  /** the secrets (by index in `secrets`) whose signature verified */
  verifiedWith: number[];
  status: number;
}

/**
 * A real HTTP receiver on loopback (Bun.serve). Every request is verified against each of `secrets()` with
 * standardwebhooks' Webhook.verify; `answer` decides the status (default 204). Waiters are told of each request,
 * so tests wait for deliveries, never for time.
 */
export function receiver(
  opts: { secrets?: () => string[]; answer?: (n: number, r: Received) => number | Response | Promise<Response> } = {},
) {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const text = await request.text();
      const headers = {
        'webhook-id': request.headers.get('webhook-id') ?? '',
        'webhook-timestamp': request.headers.get('webhook-timestamp') ?? '',
        'webhook-signature': request.headers.get('webhook-signature') ?? '',
      };
      const verifiedWith: number[] = [];
      (opts.secrets?.() ?? []).forEach((secret, i) => {
        try {
          new Webhook(secret).verify(text, headers);
          verifiedWith.push(i);
        } catch {
          // not signed with this secret
        }
      });
      const r: Received = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body: JSON.parse(text),
        verifiedWith,
        status: 0,
      };
      const answer = opts.answer?.(received.length, r) ?? 204;
      // a promised answer (held by the test) counts as 204 here: the sender may never see it
      r.status = answer instanceof Response ? answer.status : typeof answer === 'number' ? answer : 204;
      received.push(r);
      for (const w of waiters) w();
      return typeof answer === 'number' ? new Response(null, { status: answer }) : answer;
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    /** resolves once `test` holds of what was received (checked at each request) */
    until(test: (r: Received[]) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
      if (test(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: timed out waiting for ${what} (got ${received.length})`));
        }, timeoutMs);
        const check = () => {
          if (!test(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    stop: () => server.stop(true),
  };
}
