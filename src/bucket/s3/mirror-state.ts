import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the mirror knows of each object it has copied: ETag (file identity), size, LastModified. */
export interface MirroredObject {
  etag: string;
  size: number;
  lastModified: number;
}

export const STATE_FILE = '.s3-mirror-state.json';

export function loadMirrorState(dir: string): Map<string, MirroredObject> {
  try {
    return new Map(
      Object.entries(JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as Record<string, MirroredObject>),
    );
  } catch {
    return new Map();
  }
}

/** Written to a temp name and renamed, so a crash never leaves half a state file. */
export function saveMirrorState(dir: string, state: Map<string, MirroredObject>): void {
  const tmp = join(dir, `${STATE_FILE}.tmp`);
  writeFileSync(tmp, JSON.stringify(Object.fromEntries(state)));
  renameSync(tmp, join(dir, STATE_FILE));
}
