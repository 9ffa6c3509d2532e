/**
 * How the registry shows where a workflow came from without depending on the registries
 * feature: that (global) module provides this token, and the registry injects it, optionally.
 * Without it, no workflow shows a registry.
 */
export const REGISTRY_DIRECTORY = Symbol('REGISTRY_DIRECTORY');

/** A registry as workflow replies show it (`registry`, API.md 10.1). */
export interface RegistrySummary {
  uuid: string;
  name: string;
  type: string;
  uri: string;
}

export interface RegistryDirectory {
  /** The registry with this id, or undefined when it is gone. */
  describe(registryId: number): Promise<RegistrySummary | undefined>;
  /** The id of the registry of this name, or undefined when there is none. */
  idOf(name: string): Promise<number | undefined>;
}
