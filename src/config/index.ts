export {
  loadPetstoreConfig,
  type PetstoreConfig,
  petstoreAppSettings,
  petstoreSettings,
  petstoreWebhookSettings,
} from './petstore.ts';
export {
  loadPlatformConfig,
  type PlatformConfig,
  platformSettings,
  withAllowedOrigins,
} from './platform.ts';
export {
  ConfigError,
  parse,
  readSettings,
  type Setting,
  type Settings,
  storageSettings,
  type ValuesOf,
} from './settings.ts';
