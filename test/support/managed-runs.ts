import type { DataSource } from 'typeorm';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';

/** The managed runs of the instance with this uuid, oldest first, as the database holds them. */
export function managedRunsOf(dataSource: DataSource, instance: string): Promise<ManagedRunEntity[]> {
  return dataSource
    .getRepository(ManagedRunEntity)
    .createQueryBuilder('r')
    .innerJoin('test_instances', 'i', 'i.id = r.instance_id')
    .where('i.uuid = :instance', { instance })
    .orderBy('r.id', 'ASC')
    .getMany();
}
