/**
 * What notifications offer other features (the lint rule in eslint.config.js lets them import
 * from `notifications/` only through this file): the module, for the app to import, and the
 * one-click unsubscribing of mails, for its page (status-pages/).
 */
export { NotificationsModule } from './notifications.module.js';
export { MailUnsubscribeService, ONE_CLICK, type UnsubscribeView } from './mail-unsubscribe.service.js';
export { UNSUBSCRIBE_LINK_DAYS, type UnsubscribeList } from './unsubscribe-links.js';
