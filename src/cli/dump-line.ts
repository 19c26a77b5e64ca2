import type { EnvName } from '../config/index.ts';
import type { LiveHolding } from '../store/index.ts';

/**
 * One `--dump` line: `{"env","platform","doi","accessType"?,"vor"?,"updated"}`. The field order is part of the
 * format (replicas compare dumps byte for byte); `updated` is the LastModified of the file that last changed the
 * holding, never a wall clock.
 */
export interface DumpLine {
  env: EnvName;
  platform: string;
  doi: string;
  accessType?: string;
  vor?: { url: string; contentType?: string }[];
  updated: string;
}

export function dumpLine(env: EnvName, h: LiveHolding): DumpLine {
  const line = { env, platform: h.platform, doi: h.state.doi } as DumpLine;
  if (h.state.accessType) line.accessType = h.state.accessType;
  if (h.state.vor) line.vor = h.state.vor;
  line.updated = new Date(h.updated).toISOString();
  return line;
}
