import { type Static, type TOptional, type TUnknown, Type as t } from '@sinclair/typebox';
import { MAX_DOIS_PER_REQUEST } from '../../doi/index.ts';
import { UpdateObject } from '../../update-record/index.ts';

/**
 * The Entitlement API's shapes (docs/interface.md, "Entitlement API"), GetFTR's: the integrator's request and
 * our answer, and what a platform's own Entitlement API receives and answers. One schema each.
 */

const bounded = (maxLength: number, description: string) => t.String({ minLength: 1, maxLength, description });

/** Who the reader is: what a platform decides entitlement by. Addresses are checked further in org.ts. */
export const Org = t.Object(
  {
    ipv4: t.Optional(t.String({ maxLength: 15, description: "the reader's IPv4 address, dotted quad" })),
    ipv6: t.Optional(t.String({ maxLength: 45, description: "the reader's IPv6 address" })),
    entityID: t.Optional(bounded(1024, "SAML entityID of the reader's identity provider")),
    openAthensOrgID: t.Optional(bounded(256, 'OpenAthens organisation ID; only with entityID')),
    eduPersonScopedAffiliation: t.Optional(bounded(1024, 'e.g. member@university.example; only with entityID')),
    // reserved by GetFTR: accepted so that integrators sending them are not refused, not used or passed on
    ringgoldID: t.Optional(bounded(64, 'reserved: accepted, not used')),
    gridID: t.Optional(bounded(64, 'reserved: accepted, not used')),
    rorID: t.Optional(bounded(256, 'reserved: accepted, not used')),
  },
  { additionalProperties: false },
);
export type Org = Static<typeof Org>;

/**
 * GetFTR's metadata members of an entry: without `doi`, the entry is looked up by them at Crossref (entitlement/
 * lookup/) when the operator configured it, and answered 400 otherwise. Their bounds keep a search's address short.
 */
const MetadataMembers = {
  title: t.Optional(t.String({ minLength: 1, maxLength: 1024, description: "the document's title" })),
  journal: t.Optional(t.String({ minLength: 1, maxLength: 512, description: "the journal's title" })),
  authors: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 256 }), {
      minItems: 1,
      maxItems: 50,
      description: 'names of at least one of its authors ("Jane Doe" or "Doe, Jane")',
    }),
  ),
  year: t.Optional(t.Integer({ minimum: 1, maximum: 9999, description: 'the year it was published, or earlier' })),
  preprintDoi: t.Optional(
    t.String({ maxLength: 2048, description: 'a preprint of the document: followed to its published version' }),
  ),
  exactTitleMatch: t.Optional(
    t.Boolean({ description: 'true: the title must match exactly (letter case and punctuation included)' }),
  ),
};

/**
 * An entry by metadata, typed: checked entry by entry where a lookup reads it (lookup/match.ts, metadataProblem),
 * so a malformed member is that entry's 400 alone. The request schema only names the members (decision 27: refusing
 * the whole request cost the other entries their answers), and beside a `doi` they are not read at all.
 */
export const MetadataEntry = t.Object(MetadataMembers);

/** The members as the request schema takes them: any value; their types in the description, for /openapi.json. */
const namedMetadataMembers = Object.fromEntries(
  Object.entries(MetadataMembers).map(([name, schema]) => [
    name,
    t.Optional(t.Unknown({ description: `${metadataTypeOf(schema)}: ${schema.description}; read only without doi` })),
  ]),
) as { [K in keyof typeof MetadataMembers]: TOptional<TUnknown> };

function metadataTypeOf(schema: { type?: string; minimum?: number; maxLength?: number }): string {
  if (schema.type === 'array') return 'a list of names';
  if (schema.type === 'integer') return 'an integer';
  if (schema.type === 'boolean') return 'true or false';
  return `a string of at most ${schema.maxLength} characters`;
}

const DoiEntry = t.Union([
  t.String({ description: 'a DOI: bare (10.x/y), doi:10.x/y or https://doi.org/10.x/y' }),
  t.Object(
    {
      doi: t.Optional(
        t.String({
          description: 'a DOI, in any form a string entry may take; without one, the entry is looked up by metadata',
        }),
      ),
      uid: t.Optional(
        t.String({ maxLength: 256, description: "the integrator's own reference, echoed on the answer" }),
      ),
      ...namedMetadataMembers,
    },
    {
      additionalProperties: false,
      description:
        'an entry by DOI with its uid; or, without doi, an entry by metadata: looked up at Crossref (when the operator configured it) and answered as the latest published version, doi "unknown" and 404 when none matches',
    },
  ),
]);

export const EntitlementsRequest = t.Object(
  {
    org: t.Optional(Org),
    dois: t.Array(DoiEntry, { minItems: 1, maxItems: MAX_DOIS_PER_REQUEST }),
  },
  { additionalProperties: false },
);
export type EntitlementsRequest = Static<typeof EntitlementsRequest>;

export const ENTITLED_VALUES = ['yes', 'no', 'maybe'] as const;
export const Entitled = t.Union(ENTITLED_VALUES.map((v) => t.Literal(v)));
export type Entitled = Static<typeof Entitled>;

export const ENTITLEMENT_SOURCES = [
  'oa_platform',
  'service_request',
  'service_cache',
  'publisher_not_supported',
  'unknown',
] as const;
export const EntitlementSource = t.Union(ENTITLEMENT_SOURCES.map((s) => t.Literal(s)));
export type EntitlementSource = Static<typeof EntitlementSource>;

export const ContentLink = t.Object({ url: t.String(), contentType: t.Optional(t.String()) });
export type ContentLink = Static<typeof ContentLink>;

export const License = t.Object({
  type: t.String({ description: 'the licence, as the platform names it (e.g. cc_by)' }),
  url: t.String({ description: "the licence's text" }),
  startDate: t.String({ description: 'YYYY-MM-DD: the licence applies from this day' }),
});
export type License = Static<typeof License>;

/** The org on an answer from a platform: the used fields it was asked with, and its customerID for a counter integrator. */
const AnswerOrg = t.Object(
  {
    ipv4: t.Optional(t.String()),
    ipv6: t.Optional(t.String()),
    entityID: t.Optional(t.String()),
    openAthensOrgID: t.Optional(t.String()),
    eduPersonScopedAffiliation: t.Optional(t.String()),
    customerID: t.Optional(
      t.String({ description: "the platform's customer the reader was counted for; only to integrators with counter" }),
    ),
  },
  { additionalProperties: false, description: 'what the platform was asked with' },
);

const EntitlementObject = t.Object(
  {
    doi: t.Optional(
      t.String({
        description:
          'the DOI as sent; for an entry by metadata, the DOI it resolved to, or "unknown" (absent: a 400 entry without doi)',
      }),
    ),
    statusCode: t.Integer({
      description:
        '200 decided; 400 not a DOI; 404 no platform holds it, or no work matches the metadata; 504 the platform, or the metadata lookup, did not answer in time',
    }),
    entitled: t.Optional(Entitled),
    accessType: t.Optional(t.String({ description: 'open, free, permFree or paid' })),
    source: t.Optional(EntitlementSource),
    document: t.Optional(t.String({ description: 'landing page, when the platform gives one' })),
    vor: t.Optional(t.Array(ContentLink, { description: 'version-of-record links' })),
    av: t.Optional(t.Array(ContentLink, { description: "alternative versions' links, from the platform" })),
    licenses: t.Optional(t.Array(License, { description: "the document's licences, from the platform" })),
    org: t.Optional(AnswerOrg),
    uid: t.Optional(t.String()),
    updates: t.Optional(t.Array(UpdateObject, { description: 'only for integrators with the updates feature' })),
    message: t.Optional(
      t.String({ description: 'why the entry is not a DOI (400), or why its metadata lookup did not complete (504)' }),
    ),
  },
  { additionalProperties: false },
);

export const EntitlementsResponse = t.Object({ entitlements: t.Array(EntitlementObject) });

/** What a platform's Entitlement API is sent. */
export interface PlatformRequest {
  org: Org;
  dois: string[];
}

/** the most items of a list in a platform's answer (vor, av, licenses) */
export const MAX_PLATFORM_ITEMS = 32;
const PlatformUrl = t.String({ maxLength: 4096, pattern: '^https?://' });

/** A link of a platform's `vor` or `av`. */
export const PlatformLink = t.Object({ url: PlatformUrl, contentType: t.Optional(t.String({ maxLength: 128 })) });

/** A licence of a platform's `licenses`; the date must also be a day of the calendar (answer-members.ts). */
export const PlatformLicense = t.Object({
  type: t.String({ minLength: 1, maxLength: 128 }),
  url: PlatformUrl,
  startDate: t.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }),
});

/** The platform's `org` on an entry: only its customerID is read. */
export const PlatformCustomerID = t.String({ minLength: 1, maxLength: 256 });

/**
 * What a platform's Entitlement API answers, as far as the entry stands or falls by it: unknown members are
 * ignored, the used ones must have their types. An entry that breaks this is that DOI's malformed answer. `av`,
 * `licenses` and `org.customerID` are read apart (answer-members.ts): a malformed one is dropped, the entry stands.
 */
export const PlatformEntitlement = t.Object({
  doi: t.String({ maxLength: 2048 }),
  entitled: Entitled,
  accessType: t.Optional(t.String({ maxLength: 32 })),
  document: t.Optional(PlatformUrl),
  vor: t.Optional(t.Array(PlatformLink, { maxItems: MAX_PLATFORM_ITEMS })),
});
export type PlatformEntitlement = Static<typeof PlatformEntitlement>;

export const PlatformAnswer = t.Object({ entitlements: t.Array(t.Unknown(), { maxItems: 1000 }) });
