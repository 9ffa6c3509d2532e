import { Body, Controller, Get, HttpCode, Param, Post, Put, Res, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { JobsService } from './jobs.service.js';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { Roles } from '../auth/roles.decorator.js';
import { EnvelopeFilter } from '../common/filters/envelope.filter.js';
import { callerOf } from './caller.js';
import { CloudName, Operation } from './cloud-route.decorators.js';
import { AddressNodeDto } from './dto/machines.dto.js';
import { StartsService } from './starts.service.js';
import {
  ApiEnvelopeErrors,
  type EnvelopeErrorCase,
  type EnvelopeStatus,
} from './dto/api-envelope-errors.decorator.js';
import {
  AssignNodeDto,
  ExtendLeaseDto,
  isEmulated,
  PowerNodeDto,
  ReleaseNodeDto,
  StopNodeDto,
  type NodeRefDto,
} from './dto/node-ref.dto.js';
import {
  AssignmentReplyDto,
  AssignmentsReplyDto,
  CloudsReplyDto,
  ExtendReplyDto,
  FlavorsReplyDto,
  ImagesReplyDto,
  NodesReplyDto,
  jobHref,
  JobReplyDto,
  NODE_EXAMPLE,
  OkReplyDto,
  PowerReplyDto,
  StartJobReplyDto,
  toJobDto,
  StartReplyDto,
  StopReplyDto,
  toActiveAssignmentDto,
  toImageDto,
  toNodeDto,
  toSizeDto,
} from './dto/replies.dto.js';
import { StartNodeDto } from './dto/start-node.dto.js';
import { OrchestrationService, type AssignmentOutcome } from './orchestration.service.js';
import type { NodeQuery, PowerAction } from './providers/cloud-provider.js';
import { TAGS } from '../common/api-tags.js';
import { EXAMPLE } from '../common/openapi-examples.js';

const FACILITY =
  'Goes through the assignment facility: the built-in one keeps assignments in the database (one active ' +
  'assignment per node); with ASSIGNMENT_FACILITY_URL set, an external one is called over HTTP ' +
  '(protocol in src/orchestration/README.md) and its failures are 502. ' +
  '`emulate` equal to `true` or `"True"` validates the body, then answers ' +
  '`{"status": "ok", "id": 0, "id_vm": "<node or hostname as sent>", "result": "VM <id_vm> assigned (emulated)"}` ' +
  'without looking the node up or touching the facility (release answers the same text, as the original did).';

/** The request example of an operation on one node: by its id (the body may name its hostname instead). */
function byNode(more: Record<string, unknown>): Record<string, { summary: string; value: object }> {
  return { byId: { summary: 'The node by its id', value: { node: EXAMPLE.nodeId, ...more } } };
}

const LEASES =
  'Leases: assign may give `ttl_seconds` (60 to 31536000) or `expires_at` (ISO 8601 with a time zone, later ' +
  'than now, at most a year ahead), and `on_expiry`: `release` (default: the assignment ends), `poweroff` (the ' +
  'node is powered off and the assignment ends) or `destroy` (the node is destroyed). The service carries out ' +
  'each expiry once, within 60 s of its time, whichever copy of the service does it. `vm/action/extend` moves ' +
  'the end (an assigned node without a lease gets one ending in a release); `vm/status` shows `expires_at` and ' +
  '`on_expiry`. Releasing or stopping the node ends its lease.';

const POWER =
  'The node keeps its id, addresses and assignment. Powering off a stopped node, or on a running one, changes ' +
  'nothing and answers the node as it is. A destroyed node cannot be powered on: 404 where the cloud forgets ' +
  'it, 409 where it still lists it as terminated (state 2).';

function powerErrors(action: PowerAction): (EnvelopeStatus | EnvelopeErrorCase)[] {
  return [
    400,
    {
      status: 404,
      description: 'The node does not exist (or was destroyed)',
      message: "Node 42 not found in cloud 'default'",
    },
    {
      status: 409,
      description: 'The node is terminated, or (reboot) stopped',
      message: `Node 3 of cloud 'default' is ${action === 'reboot' ? 'stopped' : 'terminated'}: ${action} is not possible`,
    },
    500,
    502,
    503,
  ];
}

/**
 * Area C: `/api/v1/<operation>{/<cloud>}{.json}` (the `.json` suffix is removed before routing by
 * JsonSuffixMiddleware). HTTP only: every rule is in OrchestrationService.
 */
@ApiAuth()
@ApiEnvelopeErrors(401, 403)
@UseFilters(EnvelopeFilter)
@Roles('agent')
@ApiTags(TAGS.clouds)
@Controller('api/v1')
export class OrchestrationController {
  constructor(
    private readonly orchestration: OrchestrationService,
    private readonly starts: StartsService,
    private readonly jobs: JobsService,
  ) {}

  @Get()
  @Operation('root-get', 'Answers ok to an authorised caller', false)
  @ApiOkResponse({ type: OkReplyDto, description: 'The caller may use area C' })
  root(): OkReplyDto {
    return { status: 'ok' };
  }

  @Get('clouds')
  @Operation('clouds-get', 'The configured clouds: names and types, never settings', false)
  @ApiOkResponse({ type: CloudsReplyDto, description: 'The clouds of CLOUDS_FILE' })
  clouds(): CloudsReplyDto {
    return { status: 'ok', clouds: this.orchestration.clouds() };
  }

  @Get('cloud')
  @Operation('cloud-get', 'Alias of clouds-get', false)
  @ApiOkResponse({ type: CloudsReplyDto, description: 'The clouds of CLOUDS_FILE' })
  cloud(): CloudsReplyDto {
    return this.clouds();
  }

  @Get('nodes{/:cloud}')
  @Operation('nodes-get', 'The nodes of a cloud')
  @ApiOkResponse({ type: NodesReplyDto, description: 'Every node of the cloud' })
  @ApiEnvelopeErrors(500, 502, 503)
  async nodes(@CloudName() cloud: string): Promise<NodesReplyDto> {
    const listing = await this.orchestration.nodes(cloud);
    return { status: 'ok', nodes: listing.items.map((node) => toNodeDto(node, listing.cloud)) };
  }

  @Get('images{/:cloud}')
  @Operation('images-get', 'The images of a cloud')
  @ApiOkResponse({ type: ImagesReplyDto, description: 'Every image of the cloud' })
  @ApiEnvelopeErrors(500, 502, 503)
  async images(@CloudName() cloud: string): Promise<ImagesReplyDto> {
    const listing = await this.orchestration.images(cloud);
    return { status: 'ok', images: listing.items.map((image) => toImageDto(image, listing.cloud)) };
  }

  @Get('sizes{/:cloud}')
  @Operation('sizes-get', 'The sizes (flavors) of a cloud')
  @ApiOkResponse({ type: FlavorsReplyDto, description: 'Every size of the cloud' })
  @ApiEnvelopeErrors(500, 502, 503)
  async sizes(@CloudName() cloud: string): Promise<FlavorsReplyDto> {
    const listing = await this.orchestration.sizes(cloud);
    return { status: 'ok', flavors: listing.items.map((size) => toSizeDto(size, listing.cloud)) };
  }

  @Get('flavors{/:cloud}')
  @Operation('flavors-get', 'Alias of sizes-get, which the original system’s own clients call')
  @ApiOkResponse({ type: FlavorsReplyDto, description: 'Every size of the cloud' })
  @ApiEnvelopeErrors(500, 502, 503)
  flavors(@CloudName() cloud: string): Promise<FlavorsReplyDto> {
    return this.sizes(cloud);
  }

  @Post('vm/start{/:cloud}')
  @ApiTags(TAGS.vms)
  @HttpCode(200)
  @Operation(
    'vm-start',
    'Starts (creates) a node',
    true,
    'With `"async": true` the reply is a 202 with a job at once; the service starts the node in the background ' +
      'and follows it until it runs (job done) or fails (job failed): see jobs-get.\n\n' +
      '`keyname` is one of your key pairs (keypairs-post); `user_data` is cloud-init text (at most 16 KiB); ' +
      '`security_groups` are names (EC2: also sg- ids); `tags` (at most 20 with `owner`, which the service sets to ' +
      'your username) go to OpenStack server metadata and EC2 instance tags and show in the node’s `extra.tags`. ' +
      'The start counts against your quota (max_nodes, max_vcpus, max_ram_mib): past it, a 409 names the limit.',
  )
  @ApiBody({ type: StartNodeDto })
  @ApiOkResponse({
    type: StartReplyDto,
    description: 'The node, as the cloud reports it right after creation',
  })
  @ApiResponse({
    status: 202,
    type: StartJobReplyDto,
    description: 'async: the start is recorded as a job; follow it at its href',
    example: {
      status: 'ok',
      job: {
        id: '0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60',
        state: 'pending',
        href: '/api/v1/jobs/0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60',
      },
    },
  })
  @ApiEnvelopeErrors(
    {
      status: 400,
      description:
        'A required field is missing or not a string, async is not a boolean, an unknown image, size or security ' +
        'group, a key pair not yours, user_data over 16 KiB, more than 20 tags, or a tag the cloud refuses',
      message: "keyname 'laptop' is not a key pair of yours in cloud 'default'",
    },
    {
      status: 409,
      description: 'The start would pass your quota',
      message: 'quota max_nodes 3 reached: 3 in use',
    },
    500,
    502,
    503,
  )
  async start(
    @CloudName() cloud: string,
    @Body() body: StartNodeDto,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StartReplyDto | StartJobReplyDto> {
    const request = {
      name: body.name,
      image: body.image,
      size: body.size,
      ...(body.keyname === undefined ? {} : { keyname: body.keyname }),
      ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
      ...(body.user_data === undefined ? {} : { userData: body.user_data }),
      ...(body.security_groups === undefined ? {} : { securityGroups: body.security_groups }),
      ...(body.tags === undefined ? {} : { tags: body.tags }),
    };
    if (body.async === true) {
      const job = await this.starts.startAsync(cloud, request, callerOf(user));
      res.status(202);
      return { status: 'ok', job: { id: job.id, state: job.state, href: jobHref(job.id) } };
    }
    const started = await this.starts.start(cloud, request, callerOf(user));
    return { status: 'ok', nodes: toNodeDto(started.node, started.cloud) };
  }

  @Get('jobs/:id')
  @ApiTags(TAGS.vms)
  @Operation(
    'jobs-get',
    'An asynchronous start: its state, and the node once made',
    false,
    'Only the user who started the job, or an admin, sees it; for anyone else, as for an unknown id, the answer ' +
      'is 404. `done` means the node runs (state 0); `failed` carries `error`. Jobs are kept in the database and ' +
      'survive a restart of the service.',
  )
  @ApiParam({
    name: 'id',
    description: 'The job id from the 202 of an asynchronous start',
    format: 'uuid',
    example: EXAMPLE.jobId,
  })
  @ApiOkResponse({
    type: JobReplyDto,
    description: 'The job',
    example: {
      status: 'ok',
      job: {
        id: '0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60',
        state: 'done',
        node: NODE_EXAMPLE,
      },
    },
  })
  @ApiEnvelopeErrors({
    status: 404,
    description: 'No such job, or not one the caller may see',
    message: 'Job 0b6f2d4e-7c1a-4f7e-9d3b-2a5c8e1f4b60 not found',
  })
  async job(@Param('id') id: string, @CurrentUser() user: AuthUser): Promise<JobReplyDto> {
    const found = await this.jobs.get(id, callerOf(user));
    return { status: 'ok', job: toJobDto(found.job, found.cloud) };
  }

  @Put('vm/stop{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation(
    'vm-stop',
    'Stops (destroys) a node, by id or hostname',
    true,
    'The node is destroyed for good; an active assignment of it ends with it.',
  )
  @ApiBody({ type: StopNodeDto, examples: byNode({}) })
  @ApiOkResponse({ type: StopReplyDto, description: 'The node is destroyed' })
  @ApiEnvelopeErrors(400, 404, 500, 502, 503)
  async stop(@CloudName() cloud: string, @Body() body: StopNodeDto): Promise<StopReplyDto> {
    const id = await this.orchestration.stop(cloud, nodeQuery(body));
    return { status: 'ok', result: `Node ${id} deleted` };
  }

  @Put('vm/reboot{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation('vm-reboot', 'Reboots a node, by id or hostname', true, POWER)
  @ApiBody({ type: PowerNodeDto, examples: byNode({}) })
  @ApiOkResponse({
    type: PowerReplyDto,
    description: 'The reboot was accepted; the node as the cloud reports it',
  })
  @ApiEnvelopeErrors(...powerErrors('reboot'))
  reboot(@CloudName() cloud: string, @Body() body: PowerNodeDto): Promise<PowerReplyDto> {
    return this.power(cloud, body, 'reboot');
  }

  @Put('vm/poweroff{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation('vm-poweroff', 'Powers a node off (it is kept, state 5 stopped), by id or hostname', true, POWER)
  @ApiBody({ type: PowerNodeDto, examples: byNode({}) })
  @ApiOkResponse({
    type: PowerReplyDto,
    description: 'The node is off or on its way (state 5, or 3 while stopping)',
  })
  @ApiEnvelopeErrors(...powerErrors('poweroff'))
  poweroff(@CloudName() cloud: string, @Body() body: PowerNodeDto): Promise<PowerReplyDto> {
    return this.power(cloud, body, 'poweroff');
  }

  @Put('vm/poweron{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation('vm-poweron', 'Powers a stopped node on, by id or hostname', true, POWER)
  @ApiBody({ type: PowerNodeDto, examples: byNode({}) })
  @ApiOkResponse({
    type: PowerReplyDto,
    description: 'The node runs or is on its way (state 0, or 3 while starting)',
  })
  @ApiEnvelopeErrors(...powerErrors('poweron'))
  poweron(@CloudName() cloud: string, @Body() body: PowerNodeDto): Promise<PowerReplyDto> {
    return this.power(cloud, body, 'poweron');
  }

  @Put('vm/address/release{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation(
    'vm-address-release',
    'Detaches the public address of a node and frees it, by id or hostname',
    true,
    'OpenStack: the node’s Neutron floating IPs are deleted; EC2: its Elastic IP is disassociated and released.',
  )
  @ApiBody({ type: AddressNodeDto, examples: byNode({}) })
  @ApiOkResponse({ type: PowerReplyDto, description: 'The node without its public address' })
  @ApiEnvelopeErrors(
    400,
    {
      status: 404,
      description: 'No such node, or it has no public address',
      message: "Server 42 of cloud 'ostack' has no floating IP",
    },
    {
      status: 409,
      description: 'The cloud cannot have public addresses',
      message: "Cloud 'lab' (type scratch) cannot release public addresses",
    },
    500,
    502,
    503,
  )
  async releaseAddress(@CloudName() cloud: string, @Body() body: AddressNodeDto): Promise<PowerReplyDto> {
    const done = await this.orchestration.releaseAddress(cloud, nodeQuery(body));
    return { status: 'ok', nodes: toNodeDto(done.node, done.cloud) };
  }

  @Put('vm/address{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation(
    'vm-address',
    'Allocates a public address and attaches it to a node, by id or hostname',
    true,
    'OpenStack: a Neutron floating IP from the cloud’s `floating_network`; EC2: an Elastic IP. The address is in ' +
      'the node’s `public_ips`; stopping the node frees it. An attach that fails frees the address it allocated.',
  )
  @ApiBody({ type: AddressNodeDto, examples: byNode({}) })
  @ApiOkResponse({ type: PowerReplyDto, description: 'The node with its new public address in public_ips' })
  @ApiEnvelopeErrors(
    400,
    404,
    {
      status: 409,
      description:
        'The node has a public address already, no floating_network is configured, or the cloud cannot have them',
      message: "Cloud 'ostack' has no floating_network configured: it cannot attach public addresses",
    },
    500,
    502,
    503,
  )
  async attachAddress(@CloudName() cloud: string, @Body() body: AddressNodeDto): Promise<PowerReplyDto> {
    const done = await this.orchestration.attachAddress(cloud, nodeQuery(body));
    return { status: 'ok', nodes: toNodeDto(done.node, done.cloud) };
  }

  @Put('vm/action/assign{/:cloud}')
  @ApiTags(TAGS.assignments)
  @Operation('vm-assign', 'Assigns a node to a user and an application', true, `${FACILITY}\n\n${LEASES}`)
  @ApiBody({
    type: AssignNodeDto,
    examples: byNode({ user: 'fake_test', vm_type: 'test', ttl_seconds: 3600 }),
  })
  @ApiOkResponse({ type: AssignmentReplyDto, description: 'The node is assigned' })
  @ApiEnvelopeErrors(
    {
      status: 400,
      description:
        'A required field is missing or not a string, both or neither of node/hostname, or a lease out of bounds ' +
        '(ttl_seconds outside 60..31536000, expires_at in the past or more than a year ahead)',
      message: 'expires_at 2020-01-01T00:00:00Z is in the past',
    },
    404,
    409,
    500,
    502,
    503,
  )
  async assign(@CloudName() cloud: string, @Body() body: AssignNodeDto): Promise<AssignmentReplyDto> {
    const lease =
      body.ttl_seconds !== undefined || body.expires_at !== undefined
        ? { ttlSeconds: body.ttl_seconds, expiresAt: body.expires_at }
        : undefined;
    return toAssignmentReply(
      await this.orchestration.assign(cloud, {
        node: nodeQuery(body),
        user: body.user,
        vmType: body.vm_type,
        emulate: isEmulated(body.emulate),
        lease,
        onExpiry: body.on_expiry,
      }),
    );
  }

  @Put('vm/action/extend{/:cloud}')
  @ApiTags(TAGS.assignments)
  @Operation('vm-extend', 'Moves the end of the lease of an assigned node', true, LEASES)
  @ApiBody({ type: ExtendLeaseDto, examples: byNode({ ttl_seconds: 7200 }) })
  @ApiOkResponse({ type: ExtendReplyDto, description: 'The lease ends at the new time' })
  @ApiEnvelopeErrors(
    {
      status: 400,
      description:
        'Both or neither of node/hostname, neither or both of ttl_seconds/expires_at, or a lease out of bounds',
      message: 'exactly one of ttl_seconds and expires_at is required',
    },
    {
      status: 404,
      description: 'The node does not exist or is not assigned',
      message: "Node 3 of cloud 'default' is not assigned",
    },
    {
      status: 409,
      description: 'The lease has run out and its expiry is being carried out right now',
      message: "The lease of node 3 of cloud 'default' is ending now",
    },
    500,
    502,
    503,
  )
  async extend(@CloudName() cloud: string, @Body() body: ExtendLeaseDto): Promise<ExtendReplyDto> {
    const outcome = await this.orchestration.extend(cloud, {
      node: nodeQuery(body),
      end: { ttlSeconds: body.ttl_seconds, expiresAt: body.expires_at },
    });
    return {
      ...toAssignmentReply(outcome),
      expires_at: outcome.lease.expiresAt.toISOString(),
      on_expiry: outcome.lease.onExpiry,
    };
  }

  @Put('vm/action/release{/:cloud}')
  @ApiTags(TAGS.assignments)
  @Operation('vm-release', 'Ends the assignment of a node (the node keeps running)', true, FACILITY)
  @ApiBody({ type: ReleaseNodeDto, examples: byNode({}) })
  @ApiOkResponse({ type: AssignmentReplyDto, description: 'The assignment has ended' })
  @ApiEnvelopeErrors(400, 404, 500, 502, 503)
  async release(@CloudName() cloud: string, @Body() body: ReleaseNodeDto): Promise<AssignmentReplyDto> {
    return toAssignmentReply(
      await this.orchestration.release(cloud, { node: nodeQuery(body), emulate: isEmulated(body.emulate) }),
    );
  }

  @Get('vm/status{/:cloud}')
  @ApiTags(TAGS.vms)
  @Operation('vm-status', 'The active assignments of a cloud, with their leases')
  @ApiOkResponse({ type: AssignmentsReplyDto, description: 'The active assignments, oldest first' })
  @ApiEnvelopeErrors(500, 502, 503)
  async status(@CloudName() cloud: string): Promise<AssignmentsReplyDto> {
    const active = await this.orchestration.activeAssignments(cloud);
    return { status: 'ok', nodes: active.map(toActiveAssignmentDto) };
  }

  private async power(cloud: string, body: PowerNodeDto, action: PowerAction): Promise<PowerReplyDto> {
    const done = await this.orchestration.power(cloud, nodeQuery(body), action);
    return { status: 'ok', nodes: toNodeDto(done.node, done.cloud) };
  }
}

/** The validated body names exactly one of the two (NodeRefDto checks it). */
function nodeQuery(body: NodeRefDto): NodeQuery {
  return body.node !== undefined ? { id: body.node } : { hostname: body.hostname ?? '' };
}

function toAssignmentReply(outcome: AssignmentOutcome): AssignmentReplyDto {
  return { status: 'ok', id: outcome.id, id_vm: outcome.nodeId, result: outcome.result };
}
