import type { UpdateFormat } from '../updates/schema.ts';

/** The fully-defaulted config every part is built from: absolute paths, secrets read, defaults filled in. */

export type EnvName = 'production' | 'staging';
export const ENV_NAMES: readonly EnvName[] = ['production', 'staging'];

export interface LocalBucketSettings {
  kind: 'local';
  /** the folder that is watched */
  path: string;
}

export interface S3BucketSettings {
  kind: 's3';
  /** the local mirror folder, watched like a local bucket */
  path: string;
  endpoint?: string;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** names of the environment variables the credentials came from, for messages */
  credentialSource: string;
  pollMs: number;
}

export type BucketSettings = LocalBucketSettings | S3BucketSettings;

export interface PlatformSettings {
  name: string;
  entitlementUrl?: string;
  entitlementHeader: string;
  entitlementSecret?: string;
  entitlementTimeoutMs: number;
  entitlementConcurrency: number;
}

export interface IntegratorSettings {
  name: string;
  apiKey: string;
  updates: boolean;
}

export interface UpdateUrlSettings {
  url: string;
  format: UpdateFormat;
  everyMs: number;
}

export interface IngestSettings {
  maxDecompressedBytes: number;
  maxTries: number;
  retryBaseMs: number;
  /** how long a file's size must stay unchanged before it is read (write-finish detection) */
  settleMs: number;
}

export interface Config {
  /** the config file this came from */
  source: string;
  server: { host: string; port: number; maxBodyBytes: number };
  store: { dir: string; mapSizeBytes: number };
  ingest: IngestSettings;
  buckets: Partial<Record<EnvName, BucketSettings>> & { production: BucketSettings };
  platforms: PlatformSettings[];
  integrators: IntegratorSettings[];
  updates: { dropDir?: string; urls: UpdateUrlSettings[] };
}

export const DEFAULT_INGEST: IngestSettings = {
  maxDecompressedBytes: 64 * 1024 * 1024,
  maxTries: 5,
  retryBaseMs: 500,
  settleMs: 200,
};
