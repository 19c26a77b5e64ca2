import { programScript } from './base/index.ts';
import { lowerOwnPriority, runsInBackground } from './cli/background-priority.ts';
import { StartSignals } from './daemon/start-signals.ts';

// held from the first line: loading the program takes about 0.3 s, and a SIGHUP meanwhile would end the process
const signals = new StartSignals(process);
const argv = process.argv.slice(2);
// before the program loads: that load is about half of what a backup costs the daemon's cores
if (runsInBackground(argv)) lowerOwnPriority();
const { runProgram } = (await import(programScript())) as typeof import('./program.ts');
await runProgram(argv, process.env, signals);
