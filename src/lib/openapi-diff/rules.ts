/**
 * The change engine's rules: every id it reports, with its level and what triggers it. Ids follow
 * oasdiff's checks where one fits (docs/changes.md lists them and the deliberate differences).
 *
 * Schema rules are named `<prefix>-<aspect>`: the prefix says where the schema is used (a request
 * parameter, the request body or a property inside it; the response body, a property inside it or
 * a response header) and the aspect what changed. Their level follows one model, oasdiff's: a
 * change that narrows what a request may carry, or widens what a response may return, breaks
 * callers; the reverse does not; a change that is neither (a type replaced by another) breaks both;
 * one whose effect cannot be told from the document (a pattern rewritten) is a warning.
 */
import type { ChangeLevel } from './change.ts';

export type Direction = 'request' | 'response';
export type SchemaPrefix =
  | 'request-parameter'
  | 'request-body'
  | 'request-property'
  | 'response-body'
  | 'response-property'
  | 'response-header';

/** What a schema change does to the set of values the document allows. */
export type Effect = 'narrows' | 'widens' | 'incomparable' | 'unknown';

export interface Rule {
  readonly level: ChangeLevel;
  /** What triggers it, for docs/changes.md. */
  readonly trigger: string;
}

/** Schema aspects: the id's suffix, its effect and what triggers it. */
export const SCHEMA_ASPECTS: Readonly<Record<string, { effect: Effect; trigger: string }>> = {
  'type-changed': {
    effect: 'incomparable',
    trigger: 'the type was replaced by one that is neither wider nor narrower',
  },
  'type-generalized': {
    effect: 'widens',
    trigger: 'the type was widened (integer to number, a type added to a list, a type constraint dropped)',
  },
  'type-specialized': {
    effect: 'narrows',
    trigger: 'the type was narrowed (number to integer, a type removed from a list, a type constraint set)',
  },
  'became-nullable': {
    effect: 'widens',
    trigger: '`null` became allowed (`nullable: true` or `null` in the type list)',
  },
  'became-not-nullable': { effect: 'narrows', trigger: '`null` is no longer allowed' },
  'enum-value-added': { effect: 'widens', trigger: 'a value was added to the enum (or const)' },
  'enum-value-removed': { effect: 'narrows', trigger: 'a value was removed from the enum (or const)' },
  'became-enum': { effect: 'narrows', trigger: 'an enum (or const) was set where any value was allowed' },
  'became-not-enum': { effect: 'widens', trigger: 'the enum (or const) was dropped' },
  'pattern-added': { effect: 'narrows', trigger: 'a pattern was set' },
  'pattern-removed': { effect: 'widens', trigger: 'the pattern was dropped' },
  'pattern-changed': {
    effect: 'unknown',
    trigger: 'the pattern was rewritten (whether it accepts more or less cannot be told)',
  },
  'format-changed': { effect: 'unknown', trigger: 'the format was set, dropped or changed' },
  'one-of-added': { effect: 'widens', trigger: 'a `oneOf` alternative was added' },
  'one-of-removed': { effect: 'narrows', trigger: 'a `oneOf` alternative was removed' },
  'any-of-added': { effect: 'widens', trigger: 'an `anyOf` alternative was added' },
  'any-of-removed': { effect: 'narrows', trigger: 'an `anyOf` alternative was removed' },
  'all-of-added': {
    effect: 'narrows',
    trigger: 'an `allOf` member that cannot be merged (one with its own `oneOf`/`anyOf`) was added',
  },
  'all-of-removed': { effect: 'widens', trigger: 'an `allOf` member that cannot be merged was removed' },
  'discriminator-added': { effect: 'unknown', trigger: 'a discriminator was set' },
  'discriminator-removed': { effect: 'unknown', trigger: 'the discriminator was dropped' },
  'discriminator-property-name-changed': {
    effect: 'incomparable',
    trigger: "the discriminator's property name changed",
  },
  'discriminator-mapping-added': { effect: 'widens', trigger: 'a discriminator mapping value was added' },
  'discriminator-mapping-removed': {
    effect: 'narrows',
    trigger: 'a discriminator mapping value was removed',
  },
  'discriminator-mapping-changed': {
    effect: 'incomparable',
    trigger: 'a discriminator mapping value now names another schema',
  },
};

/** Numeric bounds: keyword → id part and whether it bounds from below. */
export const BOUNDS: readonly { keyword: string; name: string; lower: boolean }[] = [
  { keyword: 'minimum', name: 'min', lower: true },
  { keyword: 'maximum', name: 'max', lower: false },
  { keyword: 'exclusiveMinimum', name: 'exclusive-min', lower: true },
  { keyword: 'exclusiveMaximum', name: 'exclusive-max', lower: false },
  { keyword: 'minLength', name: 'min-length', lower: true },
  { keyword: 'maxLength', name: 'max-length', lower: false },
  { keyword: 'minItems', name: 'min-items', lower: true },
  { keyword: 'maxItems', name: 'max-items', lower: false },
  { keyword: 'minProperties', name: 'min-properties', lower: true },
  { keyword: 'maxProperties', name: 'max-properties', lower: false },
];

for (const { keyword, name, lower } of BOUNDS) {
  const tighter = lower ? 'increased' : 'decreased';
  const looser = lower ? 'decreased' : 'increased';
  Object.assign(SCHEMA_ASPECTS, {
    [`${name}-${tighter}`]: { effect: 'narrows', trigger: `\`${keyword}\` was ${tighter}` },
    [`${name}-${looser}`]: { effect: 'widens', trigger: `\`${keyword}\` was ${looser}` },
    [`${name}-set`]: { effect: 'narrows', trigger: `\`${keyword}\` was set where there was none` },
    [`${name}-unset`]: { effect: 'widens', trigger: `\`${keyword}\` was dropped` },
  });
}

export const SCHEMA_PREFIXES: Readonly<Record<SchemaPrefix, Direction>> = {
  'request-parameter': 'request',
  'request-body': 'request',
  'request-property': 'request',
  'response-body': 'response',
  'response-property': 'response',
  'response-header': 'response',
};

/** The model: narrowing a request or widening a response breaks callers. */
export function levelOf(effect: Effect, direction: Direction): ChangeLevel {
  if (effect === 'unknown') return 'warning';
  if (effect === 'incomparable') return 'breaking';
  return (effect === 'narrows') === (direction === 'request') ? 'breaking' : 'info';
}

/** Rules that are not schema aspects: operations, parameters, bodies, responses, security. */
const OTHER_RULES: Readonly<Record<string, Rule>> = {
  'endpoint-added': { level: 'info', trigger: 'an operation was added' },
  'api-removed-without-deprecation': {
    level: 'breaking',
    trigger:
      'an operation that was not `deprecated: true` was removed (a removed path reports each of its operations)',
  },
  'api-removed-without-sunset': {
    level: 'breaking',
    trigger:
      'a deprecated operation that named no sunset date (`x-sunset` or `x-deprecated-sunset`) was removed',
  },
  'api-removed-before-sunset': {
    level: 'breaking',
    trigger: 'a deprecated operation was removed before its sunset date',
  },
  'api-removed-with-deprecation': {
    level: 'info',
    trigger: 'a deprecated operation was removed after its sunset date: the lifecycle rule',
  },
  'endpoint-deprecated': { level: 'info', trigger: 'an operation became `deprecated: true`' },
  'endpoint-reactivated': { level: 'info', trigger: 'an operation is no longer deprecated' },
  'api-sunset-date-changed-too-small': {
    level: 'breaking',
    trigger: "a deprecated operation's sunset date moved earlier",
  },
  'new-required-request-parameter': { level: 'breaking', trigger: 'a required parameter was added' },
  'new-optional-request-parameter': { level: 'info', trigger: 'an optional parameter was added' },
  'request-parameter-removed': {
    level: 'warning',
    trigger:
      'a parameter was removed (callers that still send it are not refused by the document, but what it did is gone)',
  },
  'request-parameter-became-required': {
    level: 'breaking',
    trigger: 'an optional parameter became required',
  },
  'request-parameter-became-optional': { level: 'info', trigger: 'a required parameter became optional' },
  'added-required-request-body': { level: 'breaking', trigger: 'a required request body was added' },
  'added-optional-request-body': { level: 'info', trigger: 'an optional request body was added' },
  'request-body-removed': { level: 'breaking', trigger: 'the request body was removed' },
  'request-body-became-required': { level: 'breaking', trigger: 'the request body became required' },
  'request-body-became-optional': { level: 'info', trigger: 'the request body became optional' },
  'request-body-media-type-added': { level: 'info', trigger: 'the request body accepts a new media type' },
  'request-body-media-type-removed': {
    level: 'breaking',
    trigger: 'the request body no longer accepts a media type',
  },
  'new-required-request-property': { level: 'breaking', trigger: 'a required request property was added' },
  'new-optional-request-property': { level: 'info', trigger: 'an optional request property was added' },
  'request-property-removed': {
    level: 'warning',
    trigger:
      'a request property was removed (callers that still send it are refused only where the object forbids other properties)',
  },
  'request-property-became-required': {
    level: 'breaking',
    trigger: 'an optional request property became required',
  },
  'request-property-became-optional': {
    level: 'info',
    trigger: 'a required request property became optional',
  },
  'response-success-status-added': { level: 'info', trigger: 'a 1xx-3xx response status was added' },
  'response-success-status-removed': { level: 'breaking', trigger: 'a 1xx-3xx response status was removed' },
  'response-non-success-status-added': {
    level: 'info',
    trigger: 'a 4xx/5xx or `default` response was added',
  },
  'response-non-success-status-removed': {
    level: 'info',
    trigger: 'a 4xx/5xx or `default` response was removed',
  },
  'response-media-type-added': { level: 'info', trigger: 'a response gained a media type' },
  'response-media-type-removed': { level: 'breaking', trigger: 'a response lost a media type' },
  'response-required-property-added': { level: 'info', trigger: 'a required response property was added' },
  'response-optional-property-added': { level: 'info', trigger: 'an optional response property was added' },
  'response-required-property-removed': {
    level: 'breaking',
    trigger: 'a required response property was removed',
  },
  'response-optional-property-removed': {
    level: 'warning',
    trigger: 'an optional response property was removed',
  },
  'response-property-became-optional': {
    level: 'breaking',
    trigger: 'a required response property became optional',
  },
  'response-property-became-required': {
    level: 'info',
    trigger: 'an optional response property became required',
  },
  'response-header-added': { level: 'info', trigger: 'a response header was added' },
  'required-response-header-removed': {
    level: 'breaking',
    trigger: 'a required response header was removed',
  },
  'optional-response-header-removed': {
    level: 'warning',
    trigger: 'an optional response header was removed',
  },
  'response-header-became-optional': {
    level: 'breaking',
    trigger: 'a required response header became optional',
  },
  'api-authentication-required': {
    level: 'breaking',
    trigger: 'an operation that accepted anonymous calls now requires credentials',
  },
  'api-authentication-optional': {
    level: 'info',
    trigger: 'an operation that required credentials now accepts anonymous calls',
  },
  'api-security-added': {
    level: 'info',
    trigger: 'a new way to authenticate (a security requirement) was added',
  },
  'api-security-removed': {
    level: 'breaking',
    trigger: 'a way to authenticate (a security requirement) was removed',
  },
  'api-security-scope-added': { level: 'breaking', trigger: 'a security requirement needs a new scope' },
  'api-security-scope-removed': { level: 'info', trigger: 'a security requirement needs one scope less' },
};

/** Every rule by id: schema rules (each prefix with each aspect) and the others. */
export const RULES: Readonly<Record<string, Rule>> = (() => {
  const rules: Record<string, Rule> = {};
  for (const [prefix, direction] of Object.entries(SCHEMA_PREFIXES)) {
    for (const [aspect, { effect, trigger }] of Object.entries(SCHEMA_ASPECTS)) {
      rules[`${prefix}-${aspect}`] = { level: levelOf(effect, direction), trigger };
    }
  }
  return Object.assign(rules, OTHER_RULES);
})();
