import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { REPO, tempDir } from './fixtures.ts';

/**
 * A real S3-protocol server (s3rver from npm) on loopback, run under Node as a child process so a test can stop
 * it and start it again on the same port and folder (an outage). Always stop() it in afterAll/afterEach.
 */
export interface S3Server {
  endpoint: string;
  port: number;
  dir: string;
  client: S3Client;
  createBucket(name: string): Promise<void>;
  put(bucket: string, key: string, body: Uint8Array | string): Promise<void>;
  remove(bucket: string, key: string): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** stop + remove its folder */
  dispose(): Promise<void>;
}

export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3rver(): Promise<S3Server> {
  const tmp = tempDir('doi-holdings-s3rver-');
  const dir = join(tmp.path, 'data');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let proc: ReturnType<typeof Bun.spawn> | undefined;
  const launch = async () => {
    proc = Bun.spawn(
      [
        'node',
        join(REPO, 'node_modules/s3rver/bin/s3rver.js'),
        '-d',
        dir,
        '-a',
        '127.0.0.1',
        '-p',
        String(port),
        '--silent',
      ],
      {
        stdout: 'ignore',
        stderr: 'pipe',
      },
    );
    await waitListening(port, proc);
  };
  await launch();
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3_CREDENTIALS });
  const server: S3Server = {
    endpoint,
    port,
    dir,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async put(bucket, key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async remove(bucket, key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async stop() {
      if (!proc) return;
      proc.kill('SIGKILL');
      await proc.exited;
      proc = undefined;
    },
    async restart() {
      await server.stop();
      await launch();
    },
    async dispose() {
      await server.stop();
      client.destroy();
      tmp.remove();
    },
  };
  return server;
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

async function waitListening(port: number, proc: ReturnType<typeof Bun.spawn>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null)
      throw new Error(
        `s3rver exited with ${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}`,
      );
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) });
      await res.arrayBuffer();
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`s3rver did not listen on ${port} within 20 s`);
}
