/** What GA4GH TRS offers other features (the lint rule in eslint.config.js lets them import from `trs/` only through this file). */
export { TrsModule } from './trs.module.js';
export { mainDescriptorUrlOf, type VersionMainWorkflow } from './main-descriptor-url.js';
