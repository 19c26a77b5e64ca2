import { type Static, Type as t } from '@sinclair/typebox';

/** The deposit record and its vor item (docs/interface.md, "Depositing holdings"): one schema each, no extra properties. */

export const ACCESS_TYPES = ['paid', 'open', 'free', 'permFree'] as const;
export const CONTENT_TYPES = ['application/pdf', 'text/html', 'application/epub+zip', 'other'] as const;

export const AccessType = t.Union(ACCESS_TYPES.map((a) => t.Literal(a)));
export type AccessType = Static<typeof AccessType>;

export const ContentType = t.Union(CONTENT_TYPES.map((c) => t.Literal(c)));
export type ContentType = Static<typeof ContentType>;

export const VorItem = t.Object(
  {
    // `expected`: the pattern in words, for a publisher's fault message (schema-words.ts)
    url: t.String({ pattern: '^https?://', expected: 'an http(s) URL, starting http:// or https://' }),
    contentType: t.Optional(ContentType),
  },
  { additionalProperties: false },
);
export type VorItem = Static<typeof VorItem>;

export const DepositRecord = t.Object(
  {
    doi: t.String(),
    accessType: t.Optional(AccessType),
    deleted: t.Optional(t.Boolean()),
    vor: t.Optional(t.Array(VorItem, { minItems: 1 })),
  },
  { additionalProperties: false },
);
export type DepositRecord = Static<typeof DepositRecord>;
