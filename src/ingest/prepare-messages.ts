import type { Fault, FileFaultCode } from '../base/index.ts';
import type { FileIdentity, PreparedFile } from '../store/index.ts';

/** Messages between the Ingestor and its prepare worker. */

export interface PrepareRequest {
  id: number;
  root: string;
  key: string;
  platforms: string[];
  maxDecompressedBytes: number;
  tries: number;
  /** a read-back (read-later-files.ts): the file at root/key is read whatever its name says, as a file of this platform */
  readBackAs?: string;
}

export type PrepareReply =
  /** read, hashed, parsed and encoded: ready to apply */
  | { id: number; kind: 'prepared'; file: FileIdentity; prepared: PreparedFile }
  /** read and hashed, but its path or its content stops the whole file */
  | { id: number; kind: 'fault'; file: FileIdentity; fault: Fault<FileFaultCode>; platform?: string }
  /** not read: gone (FILE_MISSING) or unreadable for now (READ_FAILED) */
  | { id: number; kind: 'readError'; fault: Fault<'READ_FAILED' | 'FILE_MISSING'> };
