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

/** Entries that share an effect or a level, written as id → what triggers it. */
function sharing<T>(triggers: Readonly<Record<string, string>>, entry: (trigger: string) => T) {
  return Object.fromEntries(Object.entries(triggers).map(([id, trigger]) => [id, entry(trigger)]));
}

const aspects = (effect: Effect, triggers: Readonly<Record<string, string>>) =>
  sharing(triggers, (trigger) => ({ effect, trigger }));

/** Schema aspects by effect: the id's suffix and what triggers it. */
export const SCHEMA_ASPECTS: Readonly<Record<string, { effect: Effect; trigger: string }>> = {
  ...aspects('narrows', {
    'type-specialized':
      'the type was narrowed (number to integer, a type removed from a list, a type constraint set)',
    'became-not-nullable': '`null` is no longer allowed',
    'enum-value-removed': 'a value was removed from the enum (or const)',
    'became-enum': 'an enum (or const) was set where any value was allowed',
    'pattern-added': 'a pattern was set',
    'one-of-removed': 'a `oneOf` alternative was removed',
    'any-of-removed': 'an `anyOf` alternative was removed',
    'all-of-added': 'an `allOf` member that cannot be merged (one with its own `oneOf`/`anyOf`) was added',
    'discriminator-mapping-removed': 'a discriminator mapping value was removed',
  }),
  ...aspects('widens', {
    'type-generalized':
      'the type was widened (integer to number, a type added to a list, a type constraint dropped)',
    'became-nullable': '`null` became allowed (`nullable: true` or `null` in the type list)',
    'enum-value-added': 'a value was added to the enum (or const)',
    'became-not-enum': 'the enum (or const) was dropped',
    'pattern-removed': 'the pattern was dropped',
    'one-of-added': 'a `oneOf` alternative was added',
    'any-of-added': 'an `anyOf` alternative was added',
    'all-of-removed': 'an `allOf` member that cannot be merged was removed',
    'discriminator-mapping-added': 'a discriminator mapping value was added',
  }),
  ...aspects('incomparable', {
    'type-changed': 'the type was replaced by one that is neither wider nor narrower',
    'discriminator-property-name-changed': "the discriminator's property name changed",
    'discriminator-mapping-changed': 'a discriminator mapping value now names another schema',
  }),
  ...aspects('unknown', {
    'pattern-changed': 'the pattern was rewritten (whether it accepts more or less cannot be told)',
    'format-changed': 'the format was set, dropped or changed',
    'discriminator-added': 'a discriminator was set',
    'discriminator-removed': 'the discriminator was dropped',
  }),
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

const rules = (level: ChangeLevel, triggers: Readonly<Record<string, string>>) =>
  sharing(triggers, (trigger): Rule => ({ level, trigger }));

/** Rules that are not schema aspects (operations, parameters, bodies, responses, security), by level. */
const OTHER_RULES: Readonly<Record<string, Rule>> = {
  ...rules('breaking', {
    'api-removed-without-deprecation':
      'an operation that was not `deprecated: true` was removed (a removed path reports each of its operations)',
    'api-removed-without-sunset':
      'a deprecated operation that named no sunset date (`x-sunset` or `x-deprecated-sunset`) was removed',
    'api-removed-before-sunset': 'a deprecated operation was removed before its sunset date',
    'api-sunset-date-changed-too-small': "a deprecated operation's sunset date moved earlier",
    'new-required-request-parameter': 'a required parameter was added',
    'request-parameter-became-required': 'an optional parameter became required',
    'added-required-request-body': 'a required request body was added',
    'request-body-removed': 'the request body was removed',
    'request-body-became-required': 'the request body became required',
    'request-body-media-type-removed': 'the request body no longer accepts a media type',
    'new-required-request-property': 'a required request property was added',
    'request-property-became-required': 'an optional request property became required',
    'response-success-status-removed': 'a 1xx-3xx response status was removed',
    'response-media-type-removed': 'a response lost a media type',
    'response-required-property-removed': 'a required response property was removed',
    'response-property-became-optional': 'a required response property became optional',
    'required-response-header-removed': 'a required response header was removed',
    'response-header-became-optional': 'a required response header became optional',
    'api-authentication-required': 'an operation that accepted anonymous calls now requires credentials',
    'api-security-removed': 'a way to authenticate (a security requirement) was removed',
    'api-security-scope-added': 'a security requirement needs a new scope',
  }),
  ...rules('warning', {
    'request-parameter-removed':
      'a parameter was removed (callers that still send it are not refused by the document, but what it did is gone)',
    'request-property-removed':
      'a request property was removed (callers that still send it are refused only where the object forbids other properties)',
    'response-optional-property-removed': 'an optional response property was removed',
    'optional-response-header-removed': 'an optional response header was removed',
  }),
  ...rules('info', {
    'endpoint-added': 'an operation was added',
    'api-removed-with-deprecation':
      'a deprecated operation was removed after its sunset date: the lifecycle rule',
    'endpoint-deprecated': 'an operation became `deprecated: true`',
    'endpoint-reactivated': 'an operation is no longer deprecated',
    'new-optional-request-parameter': 'an optional parameter was added',
    'request-parameter-became-optional': 'a required parameter became optional',
    'added-optional-request-body': 'an optional request body was added',
    'request-body-became-optional': 'the request body became optional',
    'request-body-media-type-added': 'the request body accepts a new media type',
    'new-optional-request-property': 'an optional request property was added',
    'request-property-became-optional': 'a required request property became optional',
    'response-success-status-added': 'a 1xx-3xx response status was added',
    'response-non-success-status-added': 'a 4xx/5xx or `default` response was added',
    'response-non-success-status-removed': 'a 4xx/5xx or `default` response was removed',
    'response-media-type-added': 'a response gained a media type',
    'response-required-property-added': 'a required response property was added',
    'response-optional-property-added': 'an optional response property was added',
    'response-property-became-required': 'an optional response property became required',
    'response-header-added': 'a response header was added',
    'api-authentication-optional': 'an operation that required credentials now accepts anonymous calls',
    'api-security-added': 'a new way to authenticate (a security requirement) was added',
    'api-security-scope-removed': 'a security requirement needs one scope less',
  }),
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
