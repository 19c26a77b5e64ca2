export { AppliedDays, CHART_DAYS } from './applied-days.ts';
export {
  type ConsoleEnv,
  type ConsoleSources,
  type FileReport,
  LATEST_FILES,
  OperatorConsole,
  type Overview,
} from './console.ts';
export { CONSOLE_CSP } from './console-style.ts';
export {
  filePath,
  renderConsoleNotFound,
  renderFileReport,
  renderOverview,
  retryCommand,
  shellWord,
} from './render.ts';
