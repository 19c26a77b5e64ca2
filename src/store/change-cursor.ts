/**
 * The change feed's cursor (docs/design.md, "Change feed"): the last change a client has, named so that any
 * replica can check it describes the same history as its own. Opaque to clients: base64url of
 * `1.<commit>.<seq>.<lineage>`.
 *  - commit: the number of the feed-changing commit that gave the change `seq` its place;
 *  - seq: the change's sequence number (0: nothing yet);
 *  - lineage: the first 16 hex digits of the feed's lineage hash after that commit (LineageEntry.hash).
 */
export interface FeedCursor {
  commit: number;
  seq: number;
  lineage: string;
}

/** the lineage before any change: every store's history starts here */
export const GENESIS = '0'.repeat(64);
export const START: FeedCursor = { commit: 0, seq: 0, lineage: GENESIS.slice(0, 16) };

const FORM = /^1\.(\d{1,10})\.(\d{1,10})\.([0-9a-f]{16})$/;

export function encodeCursor(c: FeedCursor): string {
  return Buffer.from(`1.${c.commit}.${c.seq}.${c.lineage.slice(0, 16)}`).toString('base64url');
}

/** The cursor a client sent, or undefined when it is not one this service gives out. */
export function decodeCursor(text: string): FeedCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(text)) return undefined;
  const m = FORM.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!m) return undefined;
  const commit = Number(m[1]);
  const seq = Number(m[2]);
  if (commit > 0xffffffff || seq > 0xffffffff || (commit === 0) !== (seq === 0)) return undefined;
  return { commit, seq, lineage: m[3]! };
}
