export { loadPetstoreConfig, type PetstoreConfig, petstoreSettings } from './petstore.ts';
export { ConfigError, parse, readSettings, type Setting, type Settings, type ValuesOf } from './settings.ts';
