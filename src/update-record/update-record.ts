import { type Static, Type as t } from '@sinclair/typebox';
import { doiKey } from '../doi/index.ts';

/** The formats of update sources: the Retraction Watch database CSV, and Crossref works JSON. */
export const UPDATE_FORMATS = ['retraction-watch-csv', 'crossref-json'] as const;
export const UpdateFormat = t.Union(UPDATE_FORMATS.map((f) => t.Literal(f)));
export type UpdateFormat = (typeof UPDATE_FORMATS)[number];

/** The update object of the Updates API, with the values we give its fields (docs/interface.md, "Updates API"). */
export const UpdateObject = t.Object(
  {
    updateDoi: t.Union([t.String(), t.Null()], {
      description: 'DOI of the updating notice; null when the source has none',
    }),
    source: t.String({ description: '`crossref` (publisher-deposited Crossmark) or `retraction-watch`' }),
    updateType: t.String({
      description: 'retraction, correction, expression_of_concern, ... (lower case, `_` for spaces)',
    }),
    updateDate: t.String({ description: 'ISO 8601 at the precision the source gives: YYYY-MM-DD, YYYY-MM or YYYY' }),
    reasons: t.Array(t.String()),
    urls: t.Array(t.String()),
  },
  { additionalProperties: false },
);
export type UpdateObject = Static<typeof UpdateObject>;

/**
 * What makes two updates of a work the same update: one per (source, notice DOI, type), the notice DOI compared as
 * DOIs are (ASCII case aside: docs/interface.md); a notice without a DOI is named by its Retraction Watch Record ID
 * when it has one (two such records of a work are two notices). A source's later row wins over an earlier one;
 * across feeds the fuller one is served (store/updates/work-updates.ts).
 */
export function updateIdentity(
  u: Pick<UpdateObject, 'source' | 'updateDoi' | 'updateType'> & { recordId?: string },
): string {
  const notice = u.updateDoi !== null ? doiKey(u.updateDoi) : u.recordId !== undefined ? `#${u.recordId}` : '';
  return `${u.source}\u0000${notice}\u0000${u.updateType}`;
}

/** One update attached to one work (the updated document), as importers produce it. */
export interface WorkUpdate {
  /** the updated work's DOI, bare form */
  doi: string;
  update: UpdateObject;
  /** Retraction Watch's Record ID (the CSV's column, Crossref's `record-id`): what makes two feeds' rows one notice */
  recordId?: string;
  /**
   * true: this row speaks only for its own notice (a notice's `update-to`), so the work's other updates from the
   * feed stay; otherwise the work's rows in an import replace the feed's list for that work
   */
  upsert?: boolean;
}

/**
 * A row of an import: an update, or a marker saying the work was seen and the rows beside it are its whole list
 * (a work whose last Crossmark update was withdrawn comes with none).
 */
export type ImportRow = WorkUpdate | { doi: string; update: null; upsert?: undefined; recordId?: undefined };
