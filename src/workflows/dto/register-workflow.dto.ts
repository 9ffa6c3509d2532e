import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsInt,
  IsOptional,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { FollowRequestDto } from '../../repositories/index.js';
import { IsVersionLabel, VERSION_MAX_LENGTH } from '../../common/version-label.js';
import { IsAnyUuid, IsHttpUrl, OptionalText } from '../../common/validation.js';
import { COLUMN_LENGTHS } from '../columns.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

export class RegisterWorkflowDto {
  @IsDefined({ message: 'roc_link is required' })
  @MaxLength(COLUMN_LENGTHS.rocLink, {
    message: `roc_link must be at most ${COLUMN_LENGTHS.rocLink} characters long`,
  })
  @IsHttpUrl(
    EXAMPLE.repositoryLink,
    'Where to download the Workflow Testing RO-Crate: a zip archive, a GitHub repository page ' +
      '(https://github.com/{owner}/{repo}, optionally /tree/{ref}), or the ro-crate-metadata.json itself',
  )
  roc_link!: string;

  @IsVersionLabel()
  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: VERSION_MAX_LENGTH,
    example: '1.0',
    description: "A JSON string (a number is refused); no '/' or control characters",
  })
  version!: string;

  @OptionalText(
    1,
    4096,
    'Bearer ghp_…',
    "Sent as the Authorization header to the origin of roc_link only (not used for a GitHub repository link: GitHub's API is called with GITHUB_TOKEN)",
  )
  authorization?: string;

  @IsOptional()
  @IsAnyUuid()
  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    example: EXAMPLE.workflowUuid,
    description: 'The workflow to add this version to; a new one when absent',
  })
  uuid?: string;

  @OptionalText(
    1,
    COLUMN_LENGTHS.name,
    'sort-and-change-case',
    "Else the crate's root dataset name, else its main workflow's",
  )
  name?: string;

  @IsPublicFlag()
  public?: boolean;
}

/** The `public` member of registration and update bodies: a JSON boolean (a string "true" is a 400). */
export function IsPublicFlag(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsBoolean({ message: 'public must be a JSON boolean (true or false)' }),
    ApiPropertyOptional({
      type: Boolean,
      example: true,
      description:
        'Readable by anybody, with or without a token (API.md 5.1); a new workflow is private unless this is true',
    }),
  );
}

/** `PUT /workflows/{wf_uuid}`: what to change; absent members stay as they are. */
export class UpdateWorkflowDto {
  @OptionalText(
    1,
    COLUMN_LENGTHS.name,
    'sort-and-change-case',
    "The workflow's name (that of its latest version, as GET /workflows/{wf_uuid} shows it)",
  )
  name?: string;

  @IsPublicFlag()
  public?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => FollowRequestDto)
  @ApiPropertyOptional({
    type: FollowRequestDto,
    nullable: true,
    description:
      'For a workflow registered from a GitHub repository link (else 400): the tags and branches to follow ' +
      '(API.md 12). `{"tags": [], "branches": []}` follows nothing; null gives the choice back to the ' +
      "repository's `.lifemonitor.yaml`. Following begins now: tags there already are not registered.",
  })
  follow?: FollowRequestDto | null;

  // Null passes IsOptional: it gives the workflow the service's default again.
  @IsOptional()
  @IsInt({ message: 'rerun_interval_days must be an integer from 1 to 365, or null' })
  @Min(1, { message: 'rerun_interval_days must be an integer from 1 to 365, or null' })
  @Max(365, { message: 'rerun_interval_days must be an integer from 1 to 365, or null' })
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 365,
    nullable: true,
    example: 30,
    description:
      'Days between periodic re-runs of its tests (API.md 11): a build of a test instance is started when its ' +
      'latest build started longer ago than that. Null: the service default, `RERUN_INTERVAL_DAYS` (unset: none).',
  })
  rerun_interval_days?: number | null;
}

/** `PUT /workflows/{wf_uuid}/versions/{wf_version}` (`workflows-version-put`). */
export class UpdateVersionDto {
  @OptionalText(1, COLUMN_LENGTHS.name, 'This Workflow', "The version's name")
  name?: string;

  @IsOptional()
  @IsVersionLabel()
  @ApiPropertyOptional({
    type: String,
    example: '1',
    description:
      "The version's label, as WorkflowHub sends it: it must be the path's (a version is not relabelled)",
  })
  version?: string;
}

/** `PUT /suites/{suite_uuid}` (`suites-put`). */
export class UpdateSuiteDto {
  @OptionalText(1, COLUMN_LENGTHS.name, 'Workflow Test Suite', "The suite's name")
  name?: string;
}

export class RegisteredWorkflowDto {
  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;

  @ApiProperty({ format: 'uuid', example: EXAMPLE.workflowUuid })
  uuid!: string;

  @ApiProperty({ example: '1.0' })
  wf_version!: string;
}
