import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository, type EntityManager } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isForeignKeyViolation } from '../common/errors/unique-violation.js';
import { lockRows } from '../database/dialect.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';
import { UNCHECKABLE_INSTANCE } from '../crates/index.js';
import { loaded } from './dto/loaded.js';
import { TestInstanceEntity, VersionIssueEntity } from './entities/registry.entities.js';
import { insertedId, serviceFor } from './registry-rows.js';
import { RegistryEvents } from './registry-events.js';

/** An instance added to a suite through the API. */
export interface NewInstance {
  suiteId: number;
  versionId: number;
  name: string;
  serviceType: string;
  serviceUrl: string;
  resource: string;
  managed: boolean;
  now: Date;
}

/**
 * The writes of the test instances an owner adds, changes and deletes through the API (API.md
 * 4.4): each in one transaction with what RegistryEvents' listeners record of it. Instances a
 * crate declares are written with their version (VersionWriter); reads are WorkflowsRepository's.
 */
@Injectable()
export class InstancesRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(TestInstanceEntity) private readonly instances: Repository<TestInstanceEntity>,
    private readonly events: RegistryEvents,
  ) {}

  /**
   * Adds an instance to a suite in one transaction, with its test service (shared by (type, url),
   * created when new); RegistryEvents' listeners make it due for a first check in the same
   * transaction. Returns its uuid. Throws DomainError('not_found') when the suite went meanwhile.
   */
  async addInstance(input: NewInstance): Promise<string> {
    try {
      return await retryOnDeadlock(() =>
        this.dataSource.transaction(async (tx) => {
          const serviceId = await serviceFor(tx, input.serviceType, input.serviceUrl);
          const uuid = randomUUID();
          const instanceId = insertedId(
            await tx.insert(TestInstanceEntity, {
              uuid,
              suiteId: input.suiteId,
              serviceId,
              rocInstance: null,
              name: input.name,
              resource: input.resource,
              managed: input.managed,
            }),
          );
          await this.events.instancesAdded(
            tx,
            [
              {
                instanceId,
                versionId: input.versionId,
                serviceId,
                serviceType: input.serviceType,
                serviceUrl: input.serviceUrl,
                resource: input.resource,
              },
            ],
            input.now,
          );
          return uuid;
        }),
      );
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new DomainError('not_found', 'The test suite was deleted meanwhile');
      }
      throw error;
    }
  }

  /**
   * Changes an instance's name and resource in one transaction; when the resource changes,
   * RegistryEvents' listeners start its monitoring over in the same transaction, or, for an
   * instance that was never checked (its crate gave no resource it could check), start it as for a
   * new instance. False when the instance was gone already.
   */
  async updateInstance(
    id: number,
    changes: { name?: string; resource?: string },
    now: Date,
  ): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const query = tx
          .createQueryBuilder(TestInstanceEntity, 'i')
          .innerJoinAndSelect('i.service', 'service')
          .innerJoinAndSelect('i.suite', 'suite')
          .where('i.id = :id', { id });
        const current = await lockRows(query, 'write').getOne();
        if (!current) {
          return false;
        }
        if (changes.resource !== undefined && current.uncheckedReason !== null) {
          await this.startChecking(tx, current, changes.resource, now);
          await tx.update(TestInstanceEntity, { id }, { ...changes, uncheckedReason: null });
          return true;
        }
        await tx.update(TestInstanceEntity, { id }, changes);
        if (changes.resource !== undefined && changes.resource !== current.resource) {
          const serviceType = current.service?.type ?? '';
          const serviceUrl = current.service?.url ?? '';
          await this.events.instanceRetargeted(
            tx,
            { instanceId: id, serviceType, serviceUrl, resource: changes.resource },
            now,
          );
        }
        return true;
      }),
    );
  }

  /**
   * An instance that was never checked now has a resource its service can check: monitoring takes
   * it up as a new one, and its version's issue of uncheckable instances goes once none is left.
   */
  private async startChecking(
    tx: EntityManager,
    instance: TestInstanceEntity,
    resource: string,
    now: Date,
  ): Promise<void> {
    const versionId = loaded(instance.suite, 'instance.suite').versionId;
    await this.events.instancesAdded(
      tx,
      [
        {
          instanceId: instance.id,
          versionId,
          serviceId: instance.serviceId,
          serviceType: loaded(instance.service, 'instance.service').type,
          serviceUrl: loaded(instance.service, 'instance.service').url,
          resource,
        },
      ],
      now,
    );
    const others = await tx
      .createQueryBuilder(TestInstanceEntity, 'i')
      .innerJoin('i.suite', 's')
      .where('s.versionId = :versionId AND i.id <> :id AND i.uncheckedReason IS NOT NULL', {
        versionId,
        id: instance.id,
      })
      .getCount();
    if (others === 0) {
      await tx.delete(VersionIssueEntity, { versionId, issueType: UNCHECKABLE_INSTANCE.id });
    }
  }

  /** Deletes an instance (its builds and check state go by cascade), telling RegistryEvents' listeners in the same transaction. False when it was gone. */
  async deleteInstance(id: number): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const instance = await tx.findOne(TestInstanceEntity, { where: { id }, relations: { suite: true } });
        if (!instance?.suite || ((await tx.delete(TestInstanceEntity, { id })).affected ?? 0) === 0) {
          return false;
        }
        await this.events.instanceDeleted(tx, { instanceId: id, versionId: instance.suite.versionId });
        return true;
      }),
    );
  }
}
