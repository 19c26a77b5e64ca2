import { expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../src/log.ts';
import type { Store } from '../../src/store/index.ts';
import { FollowedSources } from '../../src/updates/index.ts';
import { tempDir, waitFor } from '../support/fixtures.ts';

/** The update sources the daemon follows, on their own: what their log says when an import fails unexpectedly. */

test('an import that fails other than by a fault of its source is logged with the source it was for', async () => {
  const dir = tempDir('doi-holdings-followed-');
  const lines: Record<string, unknown>[] = [];
  const log: Logger = { log: (level, event, fields) => lines.push({ level, event, ...fields }) };
  // a store that cannot be read: the failure is the service's, not the file's (no fault code, no child process)
  const broken = { env: 'production', sourceState: () => { throw new Error('store read failed'); } } as unknown as Store;
  const dropped = join(dir.path, 'rw.csv');
  writeFileSync(dropped, 'Record ID,Title\n');
  const sources = new FollowedSources({ dropDir: dir.path, nice: 10, urls: [], stores: [broken], log });
  try {
    await sources.start();
    const failed = await waitFor(() => lines.find((l) => l.event === 'updates.import_failed'), 'updates.import_failed');
    expect(failed).toEqual({ level: 'error', event: 'updates.import_failed', source: dropped, error: 'Error: store read failed' });
  } finally {
    await sources.close();
    dir.remove();
  }
});
