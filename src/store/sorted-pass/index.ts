/**
 * A backlog in one sorted pass (docs/design.md): many files' records merged through sorted runs on disk and
 * written in key order, in chunks that a crash resumes from.
 */

export {
  adoptPass,
  beginPass,
  type PassOptions,
  type PassRecord,
  PassStopped,
  processAlive,
  runPass,
  standingPass,
} from './apply-pass.ts';
export { type PassFile, passesFolder, passFolderName, removeStaleRuns, SortedPassBuilder } from './pass-files.ts';
