import { DiscoveryService } from '@nestjs/core';

/** A registry as its client needs it. */
export interface RegistryAddress {
  name: string;
  /** Without a trailing slash. */
  uri: string;
}

/** A workflow as a registry describes it. */
export interface RegistryWorkflow {
  /** The registry's id of the workflow. */
  identifier: string;
  /** Its uuid, which the workflow keeps here. */
  uuid: string | null;
  title: string;
  latestVersion: string | null;
  versions: string[];
}

/**
 * What the service reads from one type of registry (API.md 10.1). One class per type, marked
 * @RegisterRegistryClient(); a registry of a type without one can be listed and used for tokens
 * but not read from. Failures: DomainError 'not_found' for a workflow the registry does not have
 * (or does not show us), 'gateway_timeout' when it does not answer in time, 'upstream_failed' for
 * anything else it does wrong.
 */
export interface RegistryClient {
  /** The registry type it serves (`seek`). */
  readonly type: string;

  /** One workflow; `token` is a personal token of the registry's user, when there is one. */
  workflow(registry: RegistryAddress, identifier: string, token?: string): Promise<RegistryWorkflow>;

  /** The workflows the registry shows (to the token's owner, when given). */
  workflows(registry: RegistryAddress, token?: string): Promise<RegistryWorkflow[]>;

  /** Where the crate of a version is downloaded, and with what Authorization header. */
  crate(
    registry: RegistryAddress,
    identifier: string,
    version: string,
    token?: string,
  ): { link: string; authorization?: string };

  /** The registry's page of a version (`links.origin`); of the workflow without a version. */
  page(registry: RegistryAddress, identifier: string, version?: string): string;
}

export const RegisterRegistryClient = DiscoveryService.createDecorator<void>();
