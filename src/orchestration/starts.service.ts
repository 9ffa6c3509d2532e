import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import type { Caller } from './caller.js';
import { CloudRegistry } from './cloud.registry.js';
import { refOf, type CloudRef } from './dto/replies.dto.js';
import { JOB_CLAIM_MS } from './job.poller.js';
import { JobsRepository, type ClaimedJob, type Job } from './jobs.repository.js';
import { KeyPairsService } from './key-pairs.service.js';
import { admitWithin } from './quota-rules.js';
import { QuotasService } from './quotas.service.js';
import {
  assertStartable,
  type CloudNode,
  type CloudProvider,
  type StartNodeRequest,
} from './providers/cloud-provider.js';

/** The tag every node started by the service carries: the username of who started it. */
export const OWNER_TAG = 'owner';

/**
 * Starts of nodes (API.md 3.3, 8, 13): the caller's key pair, the `owner` tag, the quota, and the record
 * of the start (a row of vm_jobs, which quotas and usage read), then the cloud. Synchronous starts ask
 * the cloud at once; asynchronous ones leave that to the job poller.
 */
@Injectable()
export class StartsService {
  /** This copy's identity in the claim of a synchronous start. */
  private readonly owner = `start-${randomUUID()}`;

  constructor(
    private readonly registry: CloudRegistry,
    private readonly jobs: JobsRepository,
    private readonly keyPairs: KeyPairsService,
    private readonly quotas: QuotasService,
    private readonly clock: Clock,
  ) {}

  /**
   * Starts a node and answers it as the cloud reports it. 'invalid_input' for an unknown image or size,
   * a key pair not the caller's, or a request the cloud refuses; 'conflict' past the caller's quota.
   */
  async start(
    cloudName: string,
    request: StartNodeRequest,
    caller: Caller,
  ): Promise<{ cloud: CloudRef; node: CloudNode }> {
    const cloud = this.registry.get(cloudName);
    const job = await this.record(cloud, request, caller, true);
    let node: CloudNode;
    try {
      node = await cloud.startNode(job.request);
    } catch (error) {
      // Refused or failed: nothing was made, so nothing is held.
      await this.jobs.update(job, {
        state: 'failed',
        error: error instanceof DomainError ? error.message : 'The start failed on our side',
        stoppedAt: new Date(this.clock.nowMs()),
      });
      throw error;
    }
    await this.jobs.update(job, { state: 'done', nodeId: node.id, node });
    return { cloud: refOf(cloud), node };
  }

  /**
   * Records a start for the job poller (202). The image, size, key pair and quota are checked first, so
   * that a refusal is a 4xx now rather than a failed job later.
   */
  async startAsync(cloudName: string, request: StartNodeRequest, caller: Caller): Promise<Job> {
    return this.record(this.registry.get(cloudName), request, caller, false);
  }

  private async record(
    cloud: CloudProvider,
    request: StartNodeRequest,
    caller: Caller,
    claimed: boolean,
  ): Promise<ClaimedJob> {
    const size = await assertStartable(cloud, request);
    const keyname =
      request.keyname === undefined ? undefined : await this.keyPairs.resolve(cloud, request.keyname, caller);
    const limits = await this.quotas.limitsOf(caller.id);
    const asked = { nodes: 1, vcpus: size.cpu, ramMib: size.ramMiB };
    return this.jobs.create(
      {
        id: randomUUID(),
        cloud: cloud.name,
        ownerId: caller.id,
        ownerName: caller.username,
        request: {
          ...request,
          ...(keyname === undefined ? {} : { keyname }),
          tags: { ...request.tags, [OWNER_TAG]: caller.username },
        },
        vcpus: asked.vcpus,
        ramMib: asked.ramMib,
        now: new Date(this.clock.nowMs()),
        claim: claimed ? { owner: this.owner, claimMs: JOB_CLAIM_MS } : undefined,
      },
      (held) => admitWithin(limits, held, asked),
    );
  }
}
