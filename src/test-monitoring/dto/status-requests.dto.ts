import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { IsUuidParam, OptionalQueryInt } from '../../common/validation.js';
import { InstanceUuidParam, OptionalVersionQuery } from '../../workflows/index.js';
import { BADGE_LABEL_MAX_LENGTH, DEFAULT_BADGE_LABEL } from '../badge.js';
import { DEFAULT_HISTORY_DAYS, DEFAULT_STATS_DAYS, MAX_HISTORY_DAYS } from '../history.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

/** Builds listed when `limit` is not given. */
export const DEFAULT_LATEST_BUILDS = 10;

export class WorkflowStatusQuery {
  @OptionalVersionQuery()
  version?: string;
}

export class BadgeQuery {
  @OptionalVersionQuery()
  version?: string;

  @IsOptional()
  @IsString({ message: 'label must be given once' })
  @Length(1, BADGE_LABEL_MAX_LENGTH, {
    message: `label must be 1 to ${BADGE_LABEL_MAX_LENGTH} characters long`,
  })
  @Matches(/^[^\p{Cc}]*$/u, { message: 'label must not contain control characters' })
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: BADGE_LABEL_MAX_LENGTH,
    default: DEFAULT_BADGE_LABEL,
    example: 'galaxy tests',
    description: 'The text of the left part',
  })
  label?: string;

  @IsOptional()
  @IsString({ message: 'token must be given once' })
  @Length(1, 128, { message: 'token must be 1 to 128 characters long' })
  @ApiPropertyOptional({
    example: 'q3Vx0yT1c2k5n8P0aB4dE7gH1jK3mN6pR9sU2vX5yZ0',
    description:
      "The workflow's badge token (GET /workflows/{wf_uuid}/badge-token): opens the badge of a private workflow",
  })
  token?: string;
}

export class LatestBuildsQuery {
  @OptionalQueryInt(1, 100, `At most this many builds, newest first (default ${DEFAULT_LATEST_BUILDS})`)
  limit?: number;
}

export class BuildParams extends InstanceUuidParam {
  @IsString()
  @Length(1, 64)
  @ApiProperty({
    example: EXAMPLE.buildId,
    description:
      'The build id, as `build_id` of the builds shows it (each CI service numbers its builds its own way)',
  })
  build_id!: string;
}

/** A build of a managed instance to stop (API.md 17): any build id, the examples a queued run's. */
export class CancelBuildParams {
  @IsUuidParam('The test instance uuid', EXAMPLE.managedInstanceUuid)
  instance_uuid!: string;

  @IsString()
  @Length(1, 64)
  @ApiProperty({
    example: EXAMPLE.managedBuildId,
    description: 'The build id, as `build_id` of the builds shows it',
  })
  build_id!: string;
}

export class StatsQuery {
  @OptionalQueryInt(1, MAX_HISTORY_DAYS, `The window, in days back from now (default ${DEFAULT_STATS_DAYS})`)
  days?: number;
}

export class HistoryQuery {
  @OptionalQueryInt(
    1,
    MAX_HISTORY_DAYS,
    `How many UTC days, today included (default ${DEFAULT_HISTORY_DAYS})`,
  )
  days?: number;
}
