export { LookupCache } from './lookup-cache.ts';
export { accepts, type CrossrefItem, latest, type MetadataQuery, metadataProblem, queryForms } from './match.ts';
export { LOOKUP_OUTCOMES, type LookupCount, type LookupOutcome, MetadataLookup } from './metadata-lookup.ts';
export { exactTitle, familyName, normaliseTitle } from './titles.ts';
