/** Names for people: update types and sources as the status page and its JSON show them (Maps: a name read from a source, `constructor`, must not find Object's own members). */

const TYPE_LABELS = new Map<string, string>(
  Object.entries({
    expression_of_concern: 'Expression of concern',
    partial_retraction: 'Partial retraction',
    new_version: 'New version',
    new_edition: 'New edition',
  }),
);

/** `expression_of_concern` -> "Expression of concern"; unknown types read the same way (`_` as spaces). */
export function updateTypeLabel(updateType: string): string {
  const known = TYPE_LABELS.get(updateType);
  if (known) return known;
  const words = updateType.replace(/_/g, ' ').trim();
  return words === '' ? 'Update' : words[0]!.toUpperCase() + words.slice(1);
}

const SOURCE_LABELS = new Map<string, string>(
  Object.entries({
    'retraction-watch': 'Retraction Watch',
    crossref: 'Crossref (publisher’s notice)',
  }),
);

export function sourceLabel(source: string): string {
  return SOURCE_LABELS.get(source) ?? source;
}

const ACCESS_LABELS = new Map<string, string>(
  Object.entries({
    paid: 'paid access',
    open: 'open access',
    free: 'free to read',
    permFree: 'permanently free to read',
  }),
);

/** `permFree` -> "permanently free to read". */
export function accessLabel(accessType: string): string {
  return ACCESS_LABELS.get(accessType) ?? accessType;
}
