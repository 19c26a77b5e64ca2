/**
 * A backlog in one sorted pass (docs/design.md): many files' records merged through sorted runs on disk and
 * written in key order, in chunks that a crash resumes from.
 */
export { SortedPassBuilder, passesFolder, passFolderName, removeStaleRuns, type PassFile } from './pass-files.ts';
export {
  adoptPass,
  beginPass,
  processAlive,
  PassStopped,
  runPass,
  standingPass,
  type PassOptions,
  type PassRecord,
} from './apply-pass.ts';
