import type { Logger } from '../base/index.ts';
import type { EnvName, IngestSettings } from '../config/index.ts';
import type { Store } from '../store/index.ts';
import type { FilePreparer } from './file-preparer.ts';
import type { IngestOutcome } from './outcomes.ts';

/** What an Ingestor is given: the daemon's environment runner, `--ingest` and `--retry` each make one. */
export interface IngestorOptions {
  env: EnvName;
  store: Store;
  /** the bucket folder (a local bucket, or an S3 mirror) */
  root: string;
  /**
   * `--ingest`: each file is applied as the newest, in the order the operator gave, whatever its LastModified
   * (docs/design.md, "CLI"); otherwise a late file defers to the files after it (read-later-files.ts).
   */
  inOrderGiven?: boolean;
  /**
   * `--ingest`: the folder each key is read from when it is not `root` (a file from outside the bucket folder is
   * read from the copy kept of it: cli/ingest-copy.ts)
   */
  readFrom?: ReadonlyMap<string, string>;
  platforms: ReadonlySet<string>;
  settings: IngestSettings;
  log: Logger;
  now?: () => number;
  /** where files are read and parsed: a worker thread unless given (the CLI and tests pass an InlinePreparer) */
  preparer?: FilePreparer;
  /** told of every file's final outcome (the CLI prints them; the daemon's log and stats come from the same place) */
  onOutcome?: (outcome: IngestOutcome) => void;
  /**
   * false: a file that cannot be read (once its tries are used up) is reported, not quarantined (the CLI: the
   * operator sees it, and an earlier quarantine's reason is kept). The daemon quarantines it (default).
   */
  recordUnreadable?: boolean;
  /**
   * A file whose quarantine the store cannot write (it is full) is kept and tried again later, its backoff
   * capped (the daemon, default); false: it is reported as `unrecorded` (the CLI).
   */
  keepUnrecorded?: boolean;
}
