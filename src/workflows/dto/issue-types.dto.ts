import { ApiProperty } from '@nestjs/swagger';
import { ISSUE_SEVERITIES, type IssueSeverity, type IssueType } from '../../crates/index.js';

/** An issue type as LifeMonitor's `workflows_get_issue_types` lists it, with its severity here. */
export class IssueTypeDto {
  @ApiProperty({
    example: 'repo_layout.MissingROCrateWorkflowFile',
    description:
      "The type's identifier: the `id` of its issues in version replies, and what a .lifemonitor.yaml's " +
      '`issues.include`/`issues.exclude` name (the part after the dot, or snake_case, matches too)',
  })
  identifier!: string;

  @ApiProperty({ example: 'Missing RO-Crate workflow file' })
  name!: string;

  @ApiProperty({
    example:
      'The workflow file declared on RO-Crate metadata (the mainEntity of the root dataset) is missing in the crate.',
  })
  description!: string;

  @ApiProperty({ enum: ISSUE_SEVERITIES, example: 'error' })
  severity!: IssueSeverity;

  @ApiProperty({ type: String, isArray: true, example: ['metadata'] })
  labels!: string[];

  @ApiProperty({
    type: String,
    isArray: true,
    example: [],
    description: 'Identifiers of the types this one is checked after',
  })
  depends_on!: string[];
}

export class IssueTypeListDto {
  @ApiProperty({ type: IssueTypeDto, isArray: true })
  items!: IssueTypeDto[];
}

export function toIssueTypeResponse(type: IssueType): IssueTypeDto {
  return {
    identifier: type.id,
    name: type.name,
    description: type.description,
    severity: type.severity,
    labels: [...type.labels],
    depends_on: [...(type.dependsOn ?? [])],
  };
}
