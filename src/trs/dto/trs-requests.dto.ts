import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { OptionalQueryFlag, OptionalQueryInt } from '../../common/validation.js';
import { WORKFLOW_LANGUAGES } from '../../crates/index.js';
import { REQUESTED_TYPES } from '../tool-files.js';

/** The longest value a text filter or path parameter takes; a longer one names nothing here. */
const MAX_TEXT = 1024;

/** `/tools/{id}`: any text (TRS ids are the registry's own); an id of no visible tool is a 404. */
export class ToolParams {
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiProperty({
    example: '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67',
    description: "The tool's id: a workflow's uuid",
  })
  id!: string;
}

export class ToolVersionParams extends ToolParams {
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiProperty({
    example: EXAMPLE.version,
    description:
      'A version of the tool; `latest` (unless a version has that name) is its latest one, as cwltool asks',
  })
  version_id!: string;
}

export class DescriptorParams extends ToolVersionParams {
  @IsString()
  @ApiProperty({
    enum: REQUESTED_TYPES,
    example: EXAMPLE.descriptorType,
    description:
      'The descriptor type: wrapped in JSON (`CWL`), or the bare file (`PLAIN_CWL`, also spelled `plain-CWL`); any case',
  })
  type!: string;
}

export class FilesQuery {
  @IsOptional()
  @IsIn(['zip'], { message: 'format must be zip' })
  @ApiPropertyOptional({ enum: ['zip'], description: "`zip`: the crate's archive instead of the list" })
  format?: 'zip';
}

/** The paging and filters of `GET /tools` (TRS 2.1.0's query parameters). */
export class ToolsQuery {
  @IsOptional()
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiPropertyOptional({ description: "Only the tool with this id (a workflow's uuid)" })
  id?: string;

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Tools here have no aliases: any value lists none' })
  alias?: string;

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Every tool here is of the class `Workflow`: any other lists none' })
  toolClass?: string;

  @IsOptional()
  @IsIn(WORKFLOW_LANGUAGES, { message: `descriptorType must be one of ${WORKFLOW_LANGUAGES.join(', ')}` })
  @ApiPropertyOptional({ enum: WORKFLOW_LANGUAGES, description: "The latest version's descriptor type" })
  descriptorType?: (typeof WORKFLOW_LANGUAGES)[number];

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Tools here have no registry specific tags: any value lists none' })
  tags?: string;

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Tools here have no container image: any value lists none' })
  registry?: string;

  @IsOptional()
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiPropertyOptional({
    description: "What the tools show: the name of the registry that sent them, else their owner's username",
  })
  organization?: string;

  @IsOptional()
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiPropertyOptional({
    description: "The tool's name, exactly (the name of the workflow's latest version)",
  })
  name?: string;

  @IsOptional()
  @IsString()
  @Length(1, MAX_TEXT)
  @ApiPropertyOptional({ description: 'The same as `name`' })
  toolname?: string;

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Tools here have no description: any value lists none' })
  description?: string;

  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ description: 'Tools here name no author: any value lists none' })
  author?: string;

  @OptionalQueryFlag('`true`: checker workflows only, of which there are none here', false)
  checker?: boolean;

  @IsOptional()
  @IsString()
  @Matches(/^(\d{1,15}|last)$/, {
    message: 'offset must be a start index (a whole number) or `last`',
  })
  @ApiPropertyOptional({
    description: 'A start index, or `last` for the last `limit` tools (what `last_page` links to); default 0',
  })
  offset?: string;

  @OptionalQueryInt(1, 1000, 'At most this many tools (default 1000)')
  limit?: number;
}
