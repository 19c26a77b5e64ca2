import { Type as t, type Static } from '@sinclair/typebox';
import { UpdateObject } from '../updates/schema.ts';

/** The Updates API's request, response and error bodies (docs/interface.md, "Updates API"): one schema each. */

export const MAX_DOIS_PER_REQUEST = 100;

export const UpdatesRequest = t.Object(
  {
    dois: t.Array(t.String({ description: 'a DOI: bare (10.x/y), doi:10.x/y or https://doi.org/10.x/y' }), {
      minItems: 1,
      maxItems: MAX_DOIS_PER_REQUEST,
    }),
  },
  { additionalProperties: false },
);
export type UpdatesRequest = Static<typeof UpdatesRequest>;

export const UpdatesDocument = t.Object({
  doi: t.String({ description: 'the DOI as sent' }),
  statusCode: t.Integer({ description: '200 for a well-formed DOI, 400 for an entry that is not a DOI' }),
  updates: t.Array(UpdateObject, { description: 'always present; oldest updateDate first' }),
  message: t.Optional(t.String({ description: 'why the entry is not a DOI (statusCode 400 only)' })),
});

export const UpdatesResponse = t.Object({ documents: t.Array(UpdatesDocument) });
export type UpdatesResponse = Static<typeof UpdatesResponse>;

export const ErrorBody = t.Object({
  statusCode: t.Integer(),
  error: t.String({ description: 'a stable code: INVALID_JSON, BAD_REQUEST, UNAUTHORIZED, ...' }),
  message: t.String({ description: 'what was wrong and why, with the failing field path' }),
});
