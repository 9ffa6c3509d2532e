import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsUuidParam, OptionalQueryFlag, OptionalQueryInt } from '../../common/validation.js';

export class WorkflowUuidParam {
  @IsUuidParam('The workflow uuid')
  wf_uuid!: string;
}

export class WorkflowVersionParams extends WorkflowUuidParam {
  @IsString()
  @ApiProperty({ example: '1.0', description: 'A version of the workflow' })
  wf_version!: string;
}

export class SuiteUuidParam {
  @IsUuidParam('The test suite uuid')
  suite_uuid!: string;
}

export class InstanceUuidParam {
  @IsUuidParam('The test instance uuid')
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
