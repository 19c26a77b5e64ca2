export { AppliedDays, CHART_DAYS } from './applied-days.ts';
export {
  type ConsoleEnv,
  type ConsoleSources,
  type FileView,
  LATEST_FILES,
  OperatorConsole,
  type Overview,
} from './console.ts';
export { CONSOLE_CSP } from './console-style.ts';
export {
  filePath,
  renderConsoleNotFound,
  renderFileView,
  renderOverview,
  retryCommand,
  shellWord,
} from './render.ts';
