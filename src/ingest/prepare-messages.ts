import type { Fault } from '../fault.ts';
import type { PreparedFile } from '../store/index.ts';

/** Messages between the Ingestor and its prepare worker. */

export interface PrepareRequest {
  id: number;
  root: string;
  key: string;
  platforms: string[];
  maxDecompressedBytes: number;
  tries: number;
}

export interface FileMeta {
  key: string;
  size: number;
  hash: string;
  lastModified: number;
}

export type PrepareReply =
  | { id: number; kind: 'prepared'; file: FileMeta; prepared: PreparedFile }
  | { id: number; kind: 'fault'; file: FileMeta; fault: Fault & { platform?: string } }
  | { id: number; kind: 'readError'; code: string; message: string };
