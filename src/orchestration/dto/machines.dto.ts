import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsISO8601, IsOptional, Matches, Max, Min, ValidateIf } from 'class-validator';
import { RequiredText } from '../../common/validation.js';
import { KEY_PAIR_NAME, type OwnedKeyPair } from '../key-pairs.service.js';
import type { QuotaView, UsageRow } from '../quotas.service.js';
import { NodeRefDto } from './node-ref.dto.js';
import { OkReplyDto } from './replies.dto.js';

/** An ed25519 key made by OpenSSH's ssh-keygen, for examples. */
export const PUBLIC_KEY_EXAMPLE =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIBVerHUpq8fxlV8zVrDX3GrdEkpWYEndjJ+/kAzNAau alice@laptop';

/** Body of `POST /keypairs`. */
export class ImportKeyPairDto {
  @RequiredText(1, 64, 'laptop', 'Your name for the key pair: letters, digits, _ and -')
  @Matches(KEY_PAIR_NAME, { message: 'name must be 1 to 64 letters, digits, _ or -' })
  name!: string;

  @RequiredText(
    1,
    16384,
    PUBLIC_KEY_EXAMPLE,
    'An OpenSSH public key line: ssh-rsa (1024 to 16384 bits) or ssh-ed25519',
  )
  public_key!: string;
}

export class KeyPairDto {
  @ApiProperty({ example: 'laptop', description: 'Your name for it (at the cloud it is <owner>.<name>)' })
  name!: string;

  @ApiProperty({
    example: 'SHA256:YHoLWkwG6JzBg29nXPy77BjwrcOOrd20XblvXIvOX8E',
    description:
      "As the cloud reports it: OpenSSH's SHA256 (dummy), MD5 (OpenStack; EC2 for RSA), base64 SHA-256 (EC2 ed25519)",
  })
  fingerprint!: string;

  @ApiProperty({ example: PUBLIC_KEY_EXAMPLE.split(' ').slice(0, 2).join(' ') })
  public_key!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'alice',
    description: 'Whose it is; null for one made outside the service',
  })
  owner!: string | null;
}

export class KeyPairReplyDto extends OkReplyDto {
  @ApiProperty({ type: KeyPairDto })
  keypair!: KeyPairDto;
}

export class KeyPairsReplyDto extends OkReplyDto {
  @ApiProperty({ type: KeyPairDto, isArray: true })
  keypairs!: KeyPairDto[];
}

export class ResultReplyDto extends OkReplyDto {
  @ApiProperty({ example: "Key pair 'laptop' deleted" })
  result!: string;
}

export function toKeyPairDto(key: OwnedKeyPair): KeyPairDto {
  return { name: key.name, fingerprint: key.fingerprint, public_key: key.publicKey, owner: key.owner };
}

/** Body of `vm/address` and `vm/address/release`. */
export class AddressNodeDto extends NodeRefDto {}

/** A limit of `PUT /users/{id}/quota`: a whole number, or null for no limit; absent keeps it. */
function Limit(example: number | null, description: string): PropertyDecorator {
  return (target, key) => {
    ValidateIf((body: Record<string | symbol, unknown>) => body[key] !== null)(target, key);
    IsOptional()(target, key);
    IsInt({ message: `${String(key)} must be a whole number from 0, or null for no limit` })(target, key);
    Min(0, { message: `${String(key)} must be a whole number from 0, or null for no limit` })(target, key);
    Max(1_000_000_000, { message: `${String(key)} must be at most 1000000000` })(target, key);
    ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, example, description })(target, key);
  };
}

/** Body of `PUT /users/{id}/quota`: the limits named change, the others stay. */
export class SetQuotaDto {
  @Limit(3, 'Nodes the user may hold at once; null: no limit')
  max_nodes?: number | null;

  @Limit(8, 'Virtual CPUs of those nodes together; null: no limit')
  max_vcpus?: number | null;

  @Limit(null, 'RAM of those nodes together, MiB; null: no limit')
  max_ram_mib?: number | null;
}

export class QuotaDto {
  @ApiProperty({ example: 7 })
  user_id!: number;

  @ApiProperty({ type: Number, nullable: true, example: 3, description: 'null: no limit' })
  max_nodes!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 8 })
  max_vcpus!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: null })
  max_ram_mib!: number | null;

  @ApiProperty({
    example: true,
    description: 'false: the defaults (QUOTA_MAX_*), the user has no quota of their own',
  })
  own!: boolean;
}

export function toQuotaDto(quota: QuotaView): QuotaDto {
  return {
    user_id: quota.userId,
    max_nodes: quota.maxNodes,
    max_vcpus: quota.maxVcpus,
    max_ram_mib: quota.maxRamMib,
    own: quota.own,
  };
}

/** Query of `GET /usage`. */
export class UsageQueryDto {
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date or time' })
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Start of the window; default 30 days before to',
  })
  from?: string;

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date or time' })
  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'End of the window; default now' })
  to?: string;
}

export class HeldNodeDto {
  @ApiProperty({ example: '3' })
  id!: string;

  @ApiProperty({ example: 1 })
  vcpus!: number;

  @ApiProperty({ example: 512 })
  ram_mib!: number;

  @ApiProperty({ example: '2026-11-02T09:00:00.000Z' })
  started_at!: string;
}

export class UsageRowDto {
  @ApiProperty({ example: 'alice' })
  user!: string;

  @ApiProperty({ example: 'default' })
  cloud!: string;

  @ApiProperty({
    example: 12.5,
    description: 'Hours of nodes held within the window (running ones up to now)',
  })
  node_hours!: number;

  @ApiProperty({ example: 25, description: 'Hours times virtual CPUs' })
  vcpu_hours!: number;

  @ApiProperty({ type: HeldNodeDto, isArray: true, description: 'The nodes held now in this cloud' })
  nodes!: HeldNodeDto[];

  @ApiProperty({ type: QuotaDto })
  quota!: QuotaDto;
}

export class UsageReplyDto extends OkReplyDto {
  @ApiProperty({ example: '2026-10-03T09:00:00.000Z' })
  from!: string;

  @ApiProperty({ example: '2026-11-02T09:00:00.000Z' })
  to!: string;

  @ApiProperty({ type: UsageRowDto, isArray: true })
  usage!: UsageRowDto[];
}

export function toUsageRowDto(row: UsageRow): UsageRowDto {
  return {
    user: row.user,
    cloud: row.cloud,
    node_hours: row.nodeHours,
    vcpu_hours: row.vcpuHours,
    nodes: row.current.map((record) => ({
      id: record.nodeId ?? '',
      vcpus: record.vcpus,
      ram_mib: record.ramMib,
      started_at: record.startedAt.toISOString(),
    })),
    quota: toQuotaDto(row.quota),
  };
}
