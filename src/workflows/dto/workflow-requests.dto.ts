import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsVersionLabel } from '../../common/version-label.js';
import { IsUuidParam, OptionalQueryFlag, OptionalQueryInt } from '../../common/validation.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

export class WorkflowUuidParam {
  @IsUuidParam('The workflow uuid', EXAMPLE.workflowUuid)
  wf_uuid!: string;
}

export class WorkflowVersionParams extends WorkflowUuidParam {
  @IsString()
  @ApiProperty({ example: EXAMPLE.version, description: 'A version of the workflow' })
  wf_version!: string;
}

export class SuiteUuidParam {
  @IsUuidParam('The test suite uuid', EXAMPLE.suiteUuid)
  suite_uuid!: string;
}

export class InstanceUuidParam {
  @IsUuidParam('The test instance uuid', EXAMPLE.instanceUuid)
  instance_uuid!: string;
}

export class ListWorkflowsQuery {
  @OptionalQueryFlag('false leaves the test status of each workflow out', true)
  status?: boolean;

  @OptionalQueryInt(1, 1000, 'At most this many workflows (all when absent)')
  limit?: number;

  @OptionalQueryInt(0, Number.MAX_SAFE_INTEGER, 'Skip this many workflows first')
  offset?: number;
}

export class ReadWorkflowQuery {
  @OptionalQueryFlag(
    'true adds previous_versions: the versions registered before this one, older first',
    false,
  )
  previous_versions?: boolean;

  @OptionalQueryFlag("true adds version.ro_crate.metadata: the crate's JSON-LD", false)
  ro_crate?: boolean;
}

export class SuitesQuery {
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ example: '1.0', description: 'A version of the workflow (default: the latest)' })
  version?: string;
}

/** A version in a query (default: the latest); a malformed one is a 400, an unknown one a 404. */
export function OptionalVersionQuery(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsVersionLabel(),
    ApiPropertyOptional({
      type: String,
      example: '1.0',
      description: 'A version of the workflow (default: the latest)',
    }),
  );
}

export class BadgeTokenDto {
  @ApiProperty({
    example: 'q3Vx0yT1c2k5n8P0aB4dE7gH1jK3mN6pR9sU2vX5yZ0',
    description: 'Opens the badges of this workflow only (nothing else); the same until revoked',
  })
  token!: string;

  @ApiProperty({
    format: 'uri',
    example: `http://localhost:3000/workflows/${'1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67'}/badge.svg?token=q3Vx0yT1c2k5n8P0aB4dE7gH1jK3mN6pR9sU2vX5yZ0`,
    description: 'The SVG badge, with the token, to put in a README',
  })
  svg!: string;

  @ApiProperty({
    format: 'uri',
    example: `http://localhost:3000/workflows/${'1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67'}/badge.json?token=q3Vx0yT1c2k5n8P0aB4dE7gH1jK3mN6pR9sU2vX5yZ0`,
    description: 'The shields.io endpoint, with the token (for https://img.shields.io/endpoint?url=…)',
  })
  json!: string;
}
