import type { RegistryClientScope } from '../auth/scopes.js';

/** What each scope lets an application do, as the consent page and the metadata say it (LifeMonitor's words). */
export const SCOPE_DESCRIPTIONS: Partial<Record<RegistryClientScope, string>> = {
  'workflow.read': 'Read the workflows you may see, with their suites, instances, builds and status',
  'workflow.write': 'Change and delete your workflows, their suites and instances',
  'testingService.read': 'Read information about testing services',
  'testingService.write': 'Register testing services',
  'user.profile': 'Read your basic profile',
  'user.workflow.read': 'Read the list of your workflows',
};
