/** Sizes of the registries' text columns, refused longer with a 400 by the request DTOs. */
export const REGISTRY_COLUMNS = {
  name: 128,
  uri: 2048,
  /** A registry's id of a workflow or a user (SEEK's are numbers). */
  externalId: 64,
  /** A personal registry token before sealing (a sealed one grows by a third, plus 40 characters). */
  personalToken: 512,
} as const;

/** The kinds of registry (API.md 10.1): SEEK installations such as WorkflowHub, or any other. */
export const REGISTRY_TYPES = ['seek', 'other'] as const;
export type RegistryType = (typeof REGISTRY_TYPES)[number];
