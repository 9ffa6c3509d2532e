import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import type { AggregateTestStatus } from '../workflow-status-source.js';
import type { RegistrySummary } from '../registry-directory.js';
import { latestVersionOf, versionsOf } from '../workflow-versions.js';
import { BuildDto, toBuildResponse } from './suite-response.dto.js';
import {
  crateLinksOf,
  RegistryRefDto,
  SelfLinkDto,
  toRegistryRef,
  toWorkflowSummaryResponse,
  UUID_EXAMPLE,
  VersionHeaderDto,
  VersionListMetaDto,
  WorkflowStatusSummaryDto,
  type WorkflowSummaryView,
} from './workflow-response.dto.js';

/*
 * The items of a registry's workflow lists (API.md 10.1): LifeMonitor's shape for
 * `registry-workflows-get` and the lists by registry, which changes with what registries read,
 * not with the registry's own workflow replies.
 */

/** A version's own status in a registry's list (`versions=true`, API.md 10.1). */
export class ListedVersionStatusDto {
  @ApiProperty({
    enum: ['all_passing', 'some_passing', 'all_failing', 'not_available'],
    example: 'all_passing',
  })
  aggregate_test_status!: AggregateTestStatus;

  @ApiProperty({
    type: BuildDto,
    isArray: true,
    description: "The version's most recent build over all its instances (none yet: empty)",
  })
  latest_builds!: BuildDto[];

  @ApiProperty({ example: '', description: 'Why there is no status, empty when there is one' })
  reason!: string;
}

/** A version in a registry's list with `versions=true`: the members LifeMonitor lists there. */
export class ListedVersionDto extends PickType(VersionHeaderDto, [
  'uuid',
  'version',
  'is_latest',
  'name',
  'ro_crate',
  'links',
] as const) {
  @ApiPropertyOptional({ type: ListedVersionStatusDto, description: 'Left out with status=false' })
  status?: ListedVersionStatusDto;
}

export class ListedWorkflowStatusDto extends WorkflowStatusSummaryDto {
  @ApiProperty({ example: '', description: 'Why there is no status, empty when there is one' })
  reason!: string;
}

/** An item of a registry's workflow list (`registry-workflows-get` and the lists by registry). */
export class RegistryWorkflowItemDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;

  @ApiProperty({ example: '1.1' })
  latest_version!: string;

  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { $ref: '#/components/schemas/ListedVersionDto' }] },
    example: ['1.0', '1.1'],
    description:
      'Older first: the version strings, or with versions=true version objects with their own status',
  })
  versions!: (string | ListedVersionDto)[];

  @ApiProperty({ example: true })
  public!: boolean;

  @ApiPropertyOptional({ type: RegistryRefDto })
  registry?: RegistryRefDto;

  @ApiPropertyOptional({ type: ListedWorkflowStatusDto, description: 'Left out with status=false' })
  status?: ListedWorkflowStatusDto;
}

export class RegistryWorkflowListDto {
  @ApiProperty({ type: RegistryWorkflowItemDto, isArray: true })
  items!: RegistryWorkflowItemDto[];

  @ApiProperty({ type: SelfLinkDto })
  links!: SelfLinkDto;

  @ApiProperty({ type: VersionListMetaDto })
  meta!: Pick<VersionListMetaDto, 'api_version' | 'base_url' | 'resource'>;
}

/** What a registry's list item is made of. */
export interface RegistryWorkflowView {
  summary: WorkflowSummaryView;
  registry: RegistrySummary | null;
  /** Each version's status by version id, with versions=true and a status asked for. */
  versionStatuses?: Map<number, NonNullable<WorkflowSummaryView['status']>>;
  /** Version objects instead of strings. */
  withVersions: boolean;
}

/** No status: LifeMonitor's reason, kept as it words it. */
function reasonOf(aggregate: AggregateTestStatus): string {
  return aggregate === 'not_available' ? 'No finished build of this version yet' : '';
}

export function toRegistryWorkflowItem(view: RegistryWorkflowView, baseUrl: string): RegistryWorkflowItemDto {
  const { workflow } = view.summary;
  const plain = toWorkflowSummaryResponse(view.summary, baseUrl);
  const item: RegistryWorkflowItemDto = {
    uuid: plain.uuid,
    name: plain.name,
    latest_version: plain.latest_version,
    versions: plain.versions,
    public: plain.public,
  };
  if (view.registry !== null) {
    item.registry = toRegistryRef(view.registry);
  }
  if (plain.status !== undefined) {
    item.status = { ...plain.status, reason: reasonOf(plain.status.aggregate_test_status) };
  }
  if (view.withVersions) {
    const latest = latestVersionOf(workflow);
    item.versions = versionsOf(workflow).map((version) => {
      const listed: ListedVersionDto = {
        uuid: version.uuid,
        version: version.version,
        is_latest: version.id === latest.id,
        name: version.name,
        ro_crate: { links: crateLinksOf(workflow, version, baseUrl, view.registry) },
      };
      if (version.originLink !== null) {
        listed.links = { origin: version.originLink };
      }
      const status = view.versionStatuses?.get(version.id);
      if (status !== undefined) {
        const build = status.latestBuild;
        listed.status = {
          aggregate_test_status: status.aggregate,
          latest_builds: build
            ? [toBuildResponse(build.build, build.instance, build.lastChecks, baseUrl)]
            : [],
          reason: reasonOf(status.aggregate),
        };
      }
      return listed;
    });
  }
  return item;
}
