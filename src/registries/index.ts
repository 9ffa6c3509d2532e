/**
 * What the registries feature offers other code (the lint rule in eslint.config.js lets others
 * import from `registries/` only through this file): its module, for the app to import.
 */
export { RegistriesModule } from './registries.module.js';
