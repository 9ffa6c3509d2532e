/**
 * What notifications offer other features (the lint rule in eslint.config.js lets them import
 * from `notifications/` only through this file): the module, for the app to import.
 */
export { NotificationsModule } from './notifications.module.js';
