/**
 * Files apply in (bucket LastModified, key) order (docs/design.md, "Apply order and replica convergence"): the
 * ingestor's queue and the S3 mirror's rounds sort by it, and the store skips a late file's records for DOIs that
 * a file after it, applied first, already decided (store/apply/late-files.ts).
 */
export function applyOrder(a: { key: string; lastModified: number }, b: { key: string; lastModified: number }): number {
  return a.lastModified - b.lastModified || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
