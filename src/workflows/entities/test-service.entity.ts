import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { COLUMN_LENGTHS } from '../columns.js';

/**
 * One CI service endpoint, shared by every instance that uses the same (type, url). A pause
 * after its rate limit ran out is test monitoring's, in its own table.
 */
@Entity('test_services')
@Unique('UQ_test_services_uuid', ['uuid'])
@Unique('UQ_test_services_type_url', ['type', 'url'])
export class TestServiceEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.uuid })
  uuid!: string;

  @Column({ type: 'varchar', length: COLUMN_LENGTHS.serviceType })
  type!: string;

  /** The API base URL as the crate gives it; 512 characters keep the unique index within MySQL's key limit. */
  @Column({ type: 'varchar', length: COLUMN_LENGTHS.serviceUrl })
  url!: string;
}
