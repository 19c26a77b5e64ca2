/** Where commands write: injected so tests and the daemon share the code. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Exit codes (README, "Operating it"): 0 ok, 1 input faults found, 2 usage or config error. */
export const EXIT_OK = 0;
export const EXIT_INPUT_FAULTS = 1;
export const EXIT_USAGE = 2;
