/**
 * What orchestration offers other features (the lint rule in eslint.config.js lets them import
 * from `orchestration/` only through this file).
 */
export { OrchestrationModule } from './orchestration.module.js';
