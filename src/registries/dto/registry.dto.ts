import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsString, Length, Matches, MaxLength } from 'class-validator';
import {
  IsAnyUuid,
  IsHttpUrl,
  OptionalQueryFlag,
  OptionalQueryInt,
  OptionalText,
  RequiredText,
} from '../../common/validation.js';
import { IsPublicFlag } from '../../workflows/index.js';
import { IsVersionLabel, VERSION_MAX_LENGTH } from '../../common/version-label.js';
import type { RegistryEntity } from '../entities/registry.entity.js';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { REGISTRY_COLUMNS, REGISTRY_TYPES } from '../registry-columns.js';

const REGISTRY_UUID = EXAMPLE.registryUuid;
/** A registry's id of a workflow or a user: what fits in a path segment and a username. */
const EXTERNAL_ID = /^[A-Za-z0-9._~-]+$/;

export class CreateRegistryDto {
  @RequiredText(1, REGISTRY_COLUMNS.name, 'workflowhub', 'Unique among the registries')
  name!: string;

  @IsIn(REGISTRY_TYPES, { message: `type must be one of ${REGISTRY_TYPES.join(', ')}` })
  @ApiProperty({
    enum: REGISTRY_TYPES,
    example: 'seek',
    description: 'seek: WorkflowHub and other SEEK installations',
  })
  type!: string;

  @IsDefined({ message: 'uri is required' })
  @MaxLength(REGISTRY_COLUMNS.uri, { message: `uri must be at most ${REGISTRY_COLUMNS.uri} characters long` })
  @IsHttpUrl('https://workflowhub.eu', "The registry's base URL (SEEK: what its own links start with)")
  uri!: string;
}

export class RegistryDto {
  @ApiProperty({ format: 'uuid', example: REGISTRY_UUID })
  uuid!: string;

  @ApiProperty({ example: 'workflowhub' })
  name!: string;

  @ApiProperty({ enum: REGISTRY_TYPES, example: 'seek' })
  type!: string;

  @ApiProperty({ format: 'uri', example: 'https://workflowhub.eu' })
  uri!: string;
}

export class CreatedRegistryDto extends RegistryDto {
  @ApiProperty({ example: EXAMPLE.registryClientId, description: "The registry's OAuth2 client id" })
  client_id!: string;

  @ApiProperty({
    example: EXAMPLE.registryClientSecret,
    description: 'Shown this once (only a keyed hash is kept): set it in the registry now',
  })
  client_secret!: string;
}

export class RegistryListDto {
  @ApiProperty({ type: RegistryDto, isArray: true })
  items!: RegistryDto[];
}

export class RegistryUuidParam {
  @IsAnyUuid()
  @ApiProperty({ type: String, format: 'uuid', description: 'The registry uuid', example: REGISTRY_UUID })
  registry_uuid!: string;
}

export class RegistryWorkflowParams extends RegistryUuidParam {
  @IsString()
  @Length(1, REGISTRY_COLUMNS.externalId)
  @Matches(EXTERNAL_ID, { message: 'registry_workflow_identifier must be letters, digits, . _ ~ or -' })
  @ApiProperty({ example: EXAMPLE.registryWorkflowId, description: "The workflow's id on the registry" })
  registry_workflow_identifier!: string;
}

export class RegistryUserParam {
  @IsString()
  @Length(1, REGISTRY_COLUMNS.externalId)
  @Matches(EXTERNAL_ID, { message: 'user_id must be letters, digits, . _ ~ or -' })
  @ApiProperty({ example: EXAMPLE.registryUserId, description: "The registry's own id of its user" })
  user_id!: string;
}

/** `registry-workflows-post` and its kin: a workflow the registry has, by its id there. */
export class SubmitRegistryWorkflowDto {
  @IsDefined({ message: 'identifier is required' })
  @IsString({ message: 'identifier must be a JSON string (send "293", not 293)' })
  @Length(1, REGISTRY_COLUMNS.externalId)
  @Matches(EXTERNAL_ID, { message: 'identifier must be letters, digits, . _ ~ or -' })
  @ApiProperty({ example: EXAMPLE.registryWorkflowId, description: "The workflow's id on the registry" })
  identifier!: string;

  @IsVersionLabel()
  @ApiProperty({ type: String, minLength: 1, maxLength: VERSION_MAX_LENGTH, example: '1' })
  version!: string;

  @IsPublicFlag()
  public?: boolean;

  @OptionalText(1, 512, 'Concat two files', "Else the registry's title of the workflow")
  name?: string;
}

/**
 * The request body example of one of the three ways a registry's workflow is registered: each
 * names its own version of the example workflow, so that each example works as sent.
 */
export function submissionExample(version: string): { examples: Record<string, { value: object }> } {
  return {
    examples: { submission: { value: { identifier: EXAMPLE.registryWorkflowId, version } } },
  };
}

export class RegistryListQuery {
  @OptionalQueryFlag("With each workflow's status (and, with versions=true, each version's)", true)
  status?: boolean;

  @OptionalQueryFlag('Version objects (with their own status) instead of version strings', false)
  versions?: boolean;

  @OptionalQueryInt(1, 1000, 'A page of at most this many workflows; without it, all')
  limit?: number;

  @OptionalQueryInt(0, 1_000_000_000, 'Workflows to skip')
  offset?: number;
}

export class LinkRegistryDto {
  @RequiredText(
    1,
    REGISTRY_COLUMNS.personalToken,
    'Xq1…personal-api-token',
    "A personal API token of your account on the registry (SEEK: sent as 'Authorization: Token <t>'); stored encrypted, never shown again",
  )
  token!: string;
}

export class RegistryUserDto {
  @ApiProperty({ example: 12 })
  id!: number;

  @ApiProperty({ example: 'registry:workflowhub:2' })
  username!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { workflowhub: { sub: '2' } },
    description:
      "Per registry, the registry's id of the user (`sub`; null for a user who linked their account)",
  })
  identities!: Record<string, { sub: string | null }>;
}

export class RegistryUserListDto {
  @ApiProperty({ type: RegistryUserDto, isArray: true })
  items!: RegistryUserDto[];
}

export class IndexLinksDto {
  @ApiProperty({ format: 'uri', example: 'https://workflowhub.eu/workflows/293' })
  origin!: string;
}

export class RegistryIndexItemDto {
  @ApiProperty({ example: '293' })
  identifier!: string;

  @ApiProperty({ example: 'Concat two files' })
  name!: string;

  @ApiPropertyOptional({ format: 'uuid', example: '86da0a30-d2cd-013a-a07d-000c29a94011' })
  uuid?: string;

  @ApiPropertyOptional({ example: '2' })
  latest_version?: string;

  @ApiPropertyOptional({ type: String, isArray: true, example: ['1', '2'] })
  versions?: string[];

  @ApiProperty({ type: RegistryDto })
  registry!: RegistryDto;

  @ApiProperty({ type: IndexLinksDto })
  links!: IndexLinksDto;
}

export class RegistryIndexDto {
  @ApiProperty({ type: RegistryIndexItemDto, isArray: true })
  items!: RegistryIndexItemDto[];
}

export function toRegistryResponse(registry: RegistryEntity): RegistryDto {
  return { uuid: registry.uuid, name: registry.name, type: registry.type, uri: registry.uri };
}
