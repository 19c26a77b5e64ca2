/**
 * The change feed's cursor (docs/design.md, "Change feed"): the last change a client has, named so that any
 * replica can check it describes the same history as its own. Opaque to clients: base64url of
 * `1.<commit>.<seq>.<lineage>`, or `2.<commit>.<seq>.<lineage>.<began>` for a cursor inside a sync.
 *  - commit: a feed-changing commit whose lineage covers every change up to `seq` (the head's, when the page was
 *    read; cursors of the program before 2026-11-24 named the commit that gave `seq` its place);
 *  - seq: the change's sequence number (0: nothing yet);
 *  - lineage: the first 16 hex digits of the feed's lineage hash after that commit (LineageEntry.hash);
 *  - began: inside a sync, the head commit when its reading began (a full sync's first page): a withdrawal
 *    committed after it and pruned before the client read it is one the client may have missed (change-page.ts).
 *    0 in the short form: the tip and the pages that catch up from it, where a withdrawal the client could miss
 *    comes after `seq` whatever its commit, and every cursor the older program gave out, then judged as strictly
 *    as it can be.
 */
export interface FeedCursor {
  commit: number;
  seq: number;
  lineage: string;
  began: number;
}

/** the lineage before any change: every store's history starts here */
export const GENESIS = '0'.repeat(64);
export const START: FeedCursor = { commit: 0, seq: 0, lineage: GENESIS.slice(0, 16), began: 0 };

const FORM = /^(?:1\.(\d{1,10})\.(\d{1,10})\.([0-9a-f]{16})|2\.(\d{1,10})\.(\d{1,10})\.([0-9a-f]{16})\.(\d{1,10}))$/;

/** The short form when `began` is 0 (the tip). */
export function encodeCursor(c: FeedCursor): string {
  const text =
    c.began === 0
      ? `1.${c.commit}.${c.seq}.${c.lineage.slice(0, 16)}`
      : `2.${c.commit}.${c.seq}.${c.lineage.slice(0, 16)}.${c.began}`;
  return Buffer.from(text).toString('base64url');
}

/** The cursor a client sent, or undefined when it is not one this service gives out. */
export function decodeCursor(text: string): FeedCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(text)) return undefined;
  const m = FORM.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!m) return undefined;
  const long = m[1] === undefined;
  const commit = Number(long ? m[4] : m[1]);
  const seq = Number(long ? m[5] : m[2]);
  const began = long ? Number(m[7]) : 0;
  if (commit > 0xffffffff || seq > 0xffffffff || began > 0xffffffff || (commit === 0) !== (seq === 0)) return undefined;
  return { commit, seq, lineage: (long ? m[6] : m[3])!, began };
}
