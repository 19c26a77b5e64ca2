export { CrossrefHarvest, HARVEST_ORIGIN, type HarvestProgress, type HarvestRunOptions } from './crossref-harvest.ts';
export { CrossrefClient, parsePage, parseRetryAfter, type WorksPage, type WorksQuery } from './crossref-client.ts';
export { RateGate, parseInterval } from './rate-gate.ts';
export { loadState, PASSES, type HarvestState, type WindowFigures, type WindowProgress } from './harvest-state.ts';
