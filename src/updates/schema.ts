import { Type as t, type Static } from '@sinclair/typebox';

/** Interface section 2.4 update object, with the value rules of DESIGN section 5. */
export const UpdateObject = t.Object(
  {
    updateDoi: t.Union([t.String(), t.Null()], { description: "DOI of the updating notice; null when the source has none" }),
    source: t.String({ description: '`crossref` (publisher-deposited Crossmark) or `retraction-watch`' }),
    updateType: t.String({ description: 'retraction, correction, expression_of_concern, ... (lower case, `_` for spaces)' }),
    updateDate: t.String({ description: 'ISO 8601 at the precision the source gives: YYYY-MM-DD, YYYY-MM or YYYY' }),
    reasons: t.Array(t.String()),
    urls: t.Array(t.String()),
  },
  { additionalProperties: false },
);
export type UpdateObject = Static<typeof UpdateObject>;

/** One update attached to one work (the updated document), as importers produce it. */
export interface WorkUpdate {
  /** the updated work's DOI, bare form */
  doi: string;
  update: UpdateObject;
}
