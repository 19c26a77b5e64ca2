import { type Static, Type as t } from '@sinclair/typebox';

/**
 * A document's history as the status page shows it and its JSON variant returns it (docs/interface.md, "Document
 * status page"). Deposit file names and apply numbers stay internal: the public events carry dates only.
 */

const STATUS_CODES = [
  'retracted',
  'withdrawn',
  'partial_retraction',
  'expression_of_concern',
  'replaced',
  'corrected',
  'reinstated',
  'updated',
  'none',
] as const;
export type StatusCode = (typeof STATUS_CODES)[number];

export const DocumentStatus = t.Object(
  {
    code: t.Union(
      STATUS_CODES.map((c) => t.Literal(c)),
      {
        description:
          'The latest decisive state: a retraction stays until a reinstatement (or a retract-and-replace) reverses it; a correction or an expression of concern never hides it',
      },
    ),
    label: t.String({ description: 'The badge text, e.g. "Retracted", "No known updates"' }),
    tone: t.Union([t.Literal('alert'), t.Literal('caution'), t.Literal('neutral')], {
      description: 'alert: red; caution: amber; neutral: grey',
    }),
    date: t.Optional(t.String({ description: "The deciding notice's date (the source's precision)" })),
    source: t.Optional(t.String({ description: "The deciding notice's source" })),
  },
  { additionalProperties: false },
);
export type DocumentStatus = Static<typeof DocumentStatus>;

const AccessType = t.Union([t.Literal('paid'), t.Literal('open'), t.Literal('free'), t.Literal('permFree')]);

export const NoticeEvent = t.Object(
  {
    kind: t.Literal('notice'),
    date: t.String({ description: "The notice's date at the source's precision: YYYY-MM-DD, YYYY-MM or YYYY" }),
    updateType: t.String({ description: 'retraction, correction, expression_of_concern, reinstatement, ...' }),
    label: t.String({ description: 'The update type for people, e.g. "Expression of concern"' }),
    source: t.String({ description: '`crossref` or `retraction-watch`' }),
    noticeDoi: t.Union([t.String(), t.Null()], { description: "The notice's DOI; null when the source gives none" }),
    reasons: t.Array(t.String()),
    urls: t.Array(t.String()),
    withdrawn: t.Optional(
      t.Boolean({ description: 'true: the source no longer lists this notice (it does not count for the status)' }),
    ),
    reclassified: t.Optional(
      t.Object(
        {
          updateType: t.String({ description: "The record's nature now, e.g. correction" }),
          label: t.String({ description: 'That nature for people, e.g. "Correction"' }),
          date: t.String({ description: 'The date of the notice that stands for the record now' }),
        },
        {
          additionalProperties: false,
          description:
            'Retraction Watch re-classified the record this notice belongs to: it no longer stands (it does not count for the status and is not served)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type NoticeEvent = Static<typeof NoticeEvent>;

export const HoldingChangeEvent = t.Object(
  {
    kind: t.Literal('holding'),
    date: t.String({
      description: 'When the platform deposited the change (the deposit file’s LastModified), ISO 8601 UTC',
    }),
    platform: t.String(),
    change: t.Union([t.Literal('added'), t.Literal('changed'), t.Literal('removed'), t.Literal('re-added')]),
    accessType: t.Optional(AccessType),
    previousAccessType: t.Optional(AccessType),
    changed: t.Optional(
      t.Array(t.Union([t.Literal('access'), t.Literal('links'), t.Literal('doi')]), {
        description: 'change = changed: what changed (access type, links, the DOI’s spelling); empty when not recorded',
      }),
    ),
  },
  { additionalProperties: false },
);
export type HoldingChangeEvent = Static<typeof HoldingChangeEvent>;

export const HistoryEvent = t.Union([NoticeEvent, HoldingChangeEvent]);
export type HistoryEvent = Static<typeof HistoryEvent>;

export const CurrentHolding = t.Object(
  {
    platform: t.String(),
    held: t.Boolean({ description: 'false: the platform removed it (its history stays)' }),
    accessType: t.Optional(AccessType),
  },
  { additionalProperties: false },
);
export type CurrentHolding = Static<typeof CurrentHolding>;

export const DocumentHistory = t.Object(
  {
    doi: t.String({ description: 'The DOI as last deposited (or as the update source gave it)' }),
    status: DocumentStatus,
    holdings: t.Array(CurrentHolding, { description: 'Each platform that holds or held the DOI, in platform order' }),
    events: t.Array(HistoryEvent, { description: 'Every event, newest first' }),
  },
  { additionalProperties: false },
);
export type DocumentHistory = Static<typeof DocumentHistory>;
