import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JOB_STATES, type JobState } from '../entities/vm-job.entity.js';
import type { Job } from '../jobs.repository.js';
import { ON_EXPIRY, type OnExpiry } from '../entities/vm-lease.entity.js';
import type { LeasedAssignment } from '../leases.repository.js';
import {
  nodeUuid,
  type CloudImage,
  type CloudNode,
  type CloudProvider,
  type CloudSize,
} from '../providers/cloud-provider.js';
import { DUMMY_TYPE } from '../providers/dummy.provider.js';

/** The cloud a reply is about: its name in CLOUDS_FILE and its provider type. */
export interface CloudRef {
  readonly name: string;
  readonly type: string;
}

export function refOf(cloud: Pick<CloudProvider, 'name' | 'type'>): CloudRef {
  return { name: cloud.name, type: cloud.type };
}

const STATUS_OK = { enum: ['ok'], example: 'ok' } as const;

export class OkReplyDto {
  @ApiProperty(STATUS_OK)
  status!: 'ok';
}

export class NodeDto {
  @ApiProperty({ example: '3' })
  id!: string;

  @ApiProperty({
    example: '4a5f9b3e0f2f4a0a5f3c1b6f2a9d7e8c1b2a3f4e',
    description: 'SHA-1 hex of "<id>:<cloud_type>", as libcloud derives it',
  })
  uuid!: string;

  @ApiProperty({ example: 'cloud' })
  name!: string;

  @ApiProperty({ example: DUMMY_TYPE, description: 'The provider type of the cloud' })
  cloud_type!: string;

  @ApiProperty({ example: 'fake_driver', description: 'The cloud name from the path' })
  provider!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { foo: 'bar', image: '1', size: '1' },
    description: 'Provider-specific details',
  })
  extra!: Record<string, unknown>;

  @ApiProperty({ type: String, isArray: true, example: [] })
  private_ips!: string[];

  @ApiProperty({ type: String, isArray: true, example: ['127.0.0.3'] })
  public_ips!: string[];

  @ApiProperty({
    example: 0,
    description:
      "libcloud's numbering: 0 running, 1 rebooting, 2 terminated, 3 pending, 4 unknown, 5 stopped, 6 suspended, 7 error, 8 paused",
    minimum: 0,
    maximum: 8,
  })
  state!: number;
}

export class ImageDto {
  @ApiProperty({ example: '1' })
  id!: string;

  @ApiProperty({ example: 'Ubuntu 9.10' })
  name!: string;

  @ApiProperty({ example: DUMMY_TYPE })
  cloud_type!: string;

  @ApiProperty({ example: 'default' })
  provider!: string;
}

export class SizeDto extends ImageDto {
  @ApiProperty({ example: 1, description: 'Virtual CPUs' })
  cpu!: number;

  @ApiProperty({ example: 128, description: 'Memory, MiB' })
  ram!: number;

  @ApiProperty({ example: 4, description: 'Root disk, GiB' })
  disk!: number;
}

export class NodesReplyDto extends OkReplyDto {
  @ApiProperty({ type: NodeDto, isArray: true })
  nodes!: NodeDto[];
}

export class StartReplyDto extends OkReplyDto {
  @ApiProperty({ type: NodeDto, description: 'The started node (one object, not a list)' })
  nodes!: NodeDto;
}

/** A dummy node as replies show it, for examples. */
export const NODE_EXAMPLE = {
  id: '3',
  uuid: '4a5f9b3e0f2f4a0a5f3c1b6f2a9d7e8c1b2a3f4e',
  name: 'cloud',
  cloud_type: DUMMY_TYPE,
  provider: 'default',
  extra: { foo: 'bar', image: '1', size: '1' },
  private_ips: [],
  public_ips: ['127.0.0.3'],
  state: 0,
} as const;

export class PowerReplyDto extends OkReplyDto {
  @ApiProperty({
    type: NodeDto,
    description: 'The node as the cloud reports it right after the action (one object, not a list)',
    example: { ...NODE_EXAMPLE, state: 5 },
  })
  nodes!: NodeDto;
}

export class JobRefDto {
  @ApiProperty({ format: 'uuid', example: '0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60' })
  id!: string;

  @ApiProperty({ enum: JOB_STATES, example: 'pending' })
  state!: JobState;

  @ApiProperty({
    example: '/api/v1/jobs/0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60',
    description: 'Where to follow the job',
  })
  href!: string;
}

export class StartJobReplyDto extends OkReplyDto {
  @ApiProperty({ type: JobRefDto })
  job!: JobRefDto;
}

export class JobDto {
  @ApiProperty({ format: 'uuid', example: '0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60' })
  id!: string;

  @ApiProperty({
    enum: JOB_STATES,
    example: 'done',
    description:
      'pending (not started yet), running (the node is being made), done (the node runs: state 0), failed (see error)',
  })
  state!: JobState;

  @ApiPropertyOptional({ type: NodeDto, description: 'The node as last seen, once the cloud made it' })
  node?: NodeDto;

  @ApiPropertyOptional({
    example: "Node 3f2a… of cloud 'ostack' went into state error",
    description: 'Why it failed',
  })
  error?: string;
}

export class JobReplyDto extends OkReplyDto {
  @ApiProperty({ type: JobDto })
  job!: JobDto;
}

export class ImagesReplyDto extends OkReplyDto {
  @ApiProperty({ type: ImageDto, isArray: true })
  images!: ImageDto[];
}

export class FlavorsReplyDto extends OkReplyDto {
  @ApiProperty({ type: SizeDto, isArray: true })
  flavors!: SizeDto[];
}

export class StopReplyDto extends OkReplyDto {
  @ApiProperty({ example: 'Node 3 deleted' })
  result!: string;
}

export class AssignmentReplyDto extends OkReplyDto {
  @ApiProperty({ example: 1, description: 'The assignment id (0 when emulated)' })
  id!: number;

  @ApiProperty({ example: '3', description: 'The node id (as sent when emulated)' })
  id_vm!: string;

  @ApiProperty({ example: 'VM 3 assigned' })
  result!: string;
}

export class ActiveAssignmentDto {
  @ApiProperty({ example: 1, description: 'The assignment id' })
  id!: number;

  @ApiProperty({ example: '3', description: 'The node id' })
  id_vm!: string;

  @ApiProperty({ example: 'cloud', description: 'The node name' })
  hostname!: string;

  @ApiProperty({ example: 'fake_test' })
  user!: string;

  @ApiProperty({ example: 'test' })
  vm_type!: string;

  @ApiProperty({ format: 'date-time', example: '2025-11-21T20:30:00.000Z', description: 'ISO 8601, UTC' })
  assigned_at!: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2025-11-21T21:30:00.000Z',
    description: 'When the lease ends (ISO 8601, UTC); null for an assignment without a lease',
  })
  expires_at!: string | null;

  @ApiProperty({
    enum: ON_EXPIRY,
    nullable: true,
    example: 'release',
    description: 'What happens when the lease ends; null without a lease',
  })
  on_expiry!: OnExpiry | null;
}

export class ExtendReplyDto extends AssignmentReplyDto {
  @ApiProperty({
    format: 'date-time',
    example: '2025-11-21T22:30:00.000Z',
    description: 'The new end, ISO 8601 UTC',
  })
  expires_at!: string;

  @ApiProperty({ enum: ON_EXPIRY, example: 'release', description: 'What happens when the lease ends' })
  on_expiry!: OnExpiry;
}

export class AssignmentsReplyDto extends OkReplyDto {
  @ApiProperty({ type: ActiveAssignmentDto, isArray: true, description: 'The active assignments' })
  nodes!: ActiveAssignmentDto[];
}

export class CloudDto {
  @ApiProperty({ example: 'default' })
  name!: string;

  @ApiProperty({ example: DUMMY_TYPE })
  type!: string;
}

export class CloudsReplyDto extends OkReplyDto {
  @ApiProperty({ type: CloudDto, isArray: true })
  clouds!: CloudDto[];
}

export function toNodeDto(node: CloudNode, cloud: CloudRef): NodeDto {
  return {
    id: node.id,
    uuid: nodeUuid(node.id, cloud.type),
    name: node.name,
    cloud_type: cloud.type,
    provider: cloud.name,
    extra: { ...node.extra },
    private_ips: [...node.privateIps],
    public_ips: [...node.publicIps],
    state: node.state,
  };
}

export function toImageDto(image: CloudImage, cloud: CloudRef): ImageDto {
  return { id: image.id, name: image.name, cloud_type: cloud.type, provider: cloud.name };
}

export function toSizeDto(size: CloudSize, cloud: CloudRef): SizeDto {
  return {
    id: size.id,
    name: size.name,
    cloud_type: cloud.type,
    provider: cloud.name,
    cpu: size.cpu,
    ram: size.ramMiB,
    disk: size.diskGiB,
  };
}

export function toActiveAssignmentDto(assignment: LeasedAssignment): ActiveAssignmentDto {
  return {
    id: assignment.id,
    id_vm: assignment.nodeId,
    hostname: assignment.hostname,
    user: assignment.user,
    vm_type: assignment.vmType,
    assigned_at: assignment.assignedAt.toISOString(),
    expires_at: assignment.lease?.expiresAt.toISOString() ?? null,
    on_expiry: assignment.lease?.onExpiry ?? null,
  };
}

/** The job's path, as the 202 of an asynchronous start names it. */
export function jobHref(id: string): string {
  return `/api/v1/jobs/${id}`;
}

export function toJobDto(job: Job, cloud: CloudRef): JobDto {
  return {
    id: job.id,
    state: job.state,
    ...(job.node === null ? {} : { node: toNodeDto(job.node, cloud) }),
    ...(job.error === null ? {} : { error: job.error }),
  };
}
