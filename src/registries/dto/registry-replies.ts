import {
  LIFEMONITOR_API_VERSION,
  toRegistryWorkflowItem,
  type Registered,
  type RegisteredWorkflowDto,
  type RegistryWorkflowListDto,
} from '../../workflows/index.js';
import type { IndexedWorkflow, RegistryList, RegistryUserView } from '../registries.service.js';
import type { RegistryEntity } from '../entities/registry.entity.js';
import { toRegistryResponse, type RegistryIndexItemDto, type RegistryUserListDto } from './registry.dto.js';

export function toSubmission(registered: Registered): RegisteredWorkflowDto {
  return { name: registered.name, uuid: registered.uuid, wf_version: registered.version };
}

/** A registry's list as LifeMonitor answers it: the items, `links.self` and `meta`. */
export function toRegistryList(
  list: RegistryList,
  withVersions: boolean,
  baseUrl: string,
  resource: string,
): RegistryWorkflowListDto {
  return {
    items: list.items.map((summary) =>
      toRegistryWorkflowItem(
        { summary, registry: list.registry, versionStatuses: list.versionStatuses, withVersions },
        baseUrl,
      ),
    ),
    links: { self: `${baseUrl}${resource}` },
    meta: { api_version: LIFEMONITOR_API_VERSION, base_url: baseUrl, resource },
  };
}

export function toRegistryUsers({
  registry,
  users,
}: {
  registry: RegistryEntity;
  users: RegistryUserView[];
}): RegistryUserListDto {
  return {
    items: users.map((user) => ({
      id: user.id,
      username: user.username,
      identities: { [registry.name]: { sub: user.externalId } },
    })),
  };
}

export function toIndexItem(indexed: IndexedWorkflow): RegistryIndexItemDto {
  const { workflow } = indexed;
  const item: RegistryIndexItemDto = {
    identifier: workflow.identifier,
    name: workflow.title,
    registry: toRegistryResponse(indexed.registry),
    links: { origin: indexed.origin },
  };
  if (workflow.uuid !== null) {
    item.uuid = workflow.uuid;
  }
  if (workflow.latestVersion !== null) {
    item.latest_version = workflow.latestVersion;
  }
  if (workflow.versions.length > 0) {
    item.versions = workflow.versions;
  }
  return item;
}
