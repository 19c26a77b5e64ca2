import { StartSignals } from './daemon/start-signals.ts';

// held from the first line: loading the program takes about 0.3 s, and a SIGHUP meanwhile would end the process
const signals = new StartSignals(process);
const { runProgram } = await import('./program.ts');
await runProgram(process.argv.slice(2), process.env, signals);
