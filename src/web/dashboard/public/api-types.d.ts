/**
 * The management API's types, generated from its OpenAPI document (src/platform/api-types.ts),
 * for the dashboard's JSDoc (types.js names them for the pages). Types only: the dashboard serves
 * .js and .css, never this file, and no browser module loads it.
 */
export type * from '../../../platform/api-types.ts';
