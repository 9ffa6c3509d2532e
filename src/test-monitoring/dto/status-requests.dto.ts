import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { OptionalQueryInt } from '../../common/validation.js';
import { InstanceUuidParam } from '../../workflows/index.js';

/** Builds listed when `limit` is not given. */
export const DEFAULT_LATEST_BUILDS = 10;

export class WorkflowStatusQuery {
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({ example: '1.0', description: 'A version of the workflow (default: the latest)' })
  version?: string;
}

export class LatestBuildsQuery {
  @OptionalQueryInt(1, 100, `At most this many builds, newest first (default ${DEFAULT_LATEST_BUILDS})`)
  limit?: number;
}

export class BuildParams extends InstanceUuidParam {
  @IsString()
  @Length(1, 64)
  @ApiProperty({
    example: '8765',
    description:
      'The build id, as `build_id` of the builds shows it (each CI service numbers its builds its own way)',
  })
  build_id!: string;
}
