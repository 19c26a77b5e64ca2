/** Names for people: update types and sources as the status page and its JSON show them. */

const TYPE_LABELS: Record<string, string> = {
  expression_of_concern: 'Expression of concern',
  partial_retraction: 'Partial retraction',
  new_version: 'New version',
  new_edition: 'New edition',
};

/** `expression_of_concern` -> "Expression of concern"; unknown types read the same way (`_` as spaces). */
export function updateTypeLabel(updateType: string): string {
  const known = TYPE_LABELS[updateType];
  if (known) return known;
  const words = updateType.replace(/_/g, ' ').trim();
  return words === '' ? 'Update' : words[0]!.toUpperCase() + words.slice(1);
}

const SOURCE_LABELS: Record<string, string> = {
  'retraction-watch': 'Retraction Watch',
  crossref: 'Crossref (publisher’s notice)',
};

export function sourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? source;
}

const ACCESS_LABELS: Record<string, string> = {
  paid: 'paid access',
  open: 'open access',
  free: 'free to read',
  permFree: 'permanently free to read',
};

/** `permFree` -> "permanently free to read". */
export function accessLabel(accessType: string): string {
  return ACCESS_LABELS[accessType] ?? accessType;
}
