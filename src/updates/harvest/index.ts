export { parseInterval, parseRetryAfter, RateGate } from '../../crossref/index.ts';
export { CrossrefClient, parsePage, type WorksPage, type WorksQuery } from './crossref-client.ts';
export { CrossrefHarvest, HARVEST_ORIGIN, type HarvestProgress, type HarvestRunOptions } from './crossref-harvest.ts';
export { type HarvestState, loadState, PASSES, type WindowFigures, type WindowProgress } from './harvest-state.ts';
