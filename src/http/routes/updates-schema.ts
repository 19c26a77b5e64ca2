import { type Static, Type as t } from '@sinclair/typebox';
import { MAX_DOIS_PER_REQUEST } from '../../doi/index.ts';
import { UpdateObject } from '../../update-record/index.ts';

/** The Updates API's request, response and error bodies (docs/interface.md, "Updates API"): one schema each. */

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

const UpdatesDocument = t.Object({
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

/** The change feed and the private lookup (docs/design.md, "Change feed", "Private lookup"). */
export const MAX_CHANGES_PER_PAGE = 1000;
const MAX_PREFIXES_PER_REQUEST = 100;

const ChangeItem = t.Object({
  doi: t.String({ description: 'the work’s DOI as the source gave it' }),
  updates: t.Array(UpdateObject, {
    description: 'the complete current list (as the Updates API gives it); [] when the last one was withdrawn',
  }),
});

export const ChangesResponse = t.Object({
  changes: t.Array(ChangeItem, { description: 'works whose updates changed, each once, oldest change first' }),
  next: t.String({
    description: 'opaque cursor: pass it as `after` to get what changed since; valid on every replica',
  }),
  more: t.Boolean({ description: 'true when more changes are waiting now (ask again at once with `next`)' }),
});

export const PrefixListResponse = t.Object({
  algorithm: t.Literal('sha256'),
  of: t.Literal('doi-key', {
    description:
      'the DOI lower-cased (ASCII letters only), without doi: or https://doi.org/ (a doi.org link percent-decoded)',
  }),
  prefixLength: t.Integer({ description: 'hex digits per prefix' }),
  works: t.Integer({ description: 'works with updates' }),
  prefixes: t.Array(t.String(), { description: 'every prefix under which at least one work has updates, ascending' }),
});

export const ByPrefixRequest = t.Object(
  {
    prefixes: t.Array(
      t.String({ pattern: '^[0-9a-fA-F]{1,64}$', description: 'a hex prefix of a DOI key’s SHA-256' }),
      {
        minItems: 1,
        maxItems: MAX_PREFIXES_PER_REQUEST,
      },
    ),
  },
  { additionalProperties: false },
);
export type ByPrefixRequest = Static<typeof ByPrefixRequest>;

export const ByPrefixResponse = t.Object({
  prefixLength: t.Integer({ description: 'the prefix length the service hands out now' }),
  works: t.Array(
    t.Object({
      hash: t.String({ description: 'the full SHA-256 of the DOI key (hex): match it locally' }),
      doi: t.String(),
      updates: t.Array(UpdateObject),
    }),
  ),
});
