import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { VmAddressEntity } from './entities/vm-address.entity.js';

/** All SQL of `vm_addresses`: the public addresses the service attached, one per node. */
@Injectable()
export class AddressesRepository {
  constructor(@InjectRepository(VmAddressEntity) private readonly rows: Repository<VmAddressEntity>) {}

  /**
   * Takes the node's place before the cloud is asked; false when the node has one already (an attach
   * of this or another copy of the service, under way or done).
   */
  async reserve(cloud: string, nodeId: string, now: Date): Promise<boolean> {
    try {
      await this.rows.insert({ cloud, nodeId, address: null, createdAt: now });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  async attached(cloud: string, nodeId: string, address: string): Promise<void> {
    await this.rows.update({ cloud, nodeId, address: IsNull() }, { address });
  }

  /** The address the service attached to the node, if any (null while the attach is under way). */
  async find(cloud: string, nodeId: string): Promise<{ address: string | null } | undefined> {
    const row = await this.rows.findOneBy({ cloud, nodeId });
    return row ? { address: row.address } : undefined;
  }

  async remove(cloud: string, nodeId: string): Promise<void> {
    await this.rows.delete({ cloud, nodeId });
  }
}
