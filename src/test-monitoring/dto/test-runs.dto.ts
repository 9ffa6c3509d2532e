import { ApiProperty } from '@nestjs/swagger';
import type { CancelledBuild, StartedBuild } from '../test-runs.service.js';
import { TRIGGER_HOWS, type TriggerHow } from '../testing-services/testing-service.js';

export class StartedBuildDto {
  @ApiProperty({
    format: 'uuid',
    example: '7a1f7f3e-2b1c-4d7e-9a4b-1c2d3e4f5a6b',
    description: 'The test instance',
  })
  instance!: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T08:00:00.000Z',
    description: 'When the build was asked for',
  })
  requested!: string;

  @ApiProperty({
    enum: TRIGGER_HOWS,
    example: 'dispatch',
    description:
      'How: a GitHub `workflow_dispatch` (`dispatch`) or, for a workflow without that trigger, a re-run of its ' +
      'latest run (`rerun`); a Travis build request (`request`); a Jenkins build or a managed run (`build`)',
  })
  how!: TriggerHow;
}

export function toStartedBuildResponse(started: StartedBuild): StartedBuildDto {
  return { instance: started.instanceUuid, requested: started.requested.toISOString(), how: started.how };
}

export class CancelledBuildDto {
  @ApiProperty({
    format: 'uuid',
    example: '7a1f7f3e-2b1c-4d7e-9a4b-1c2d3e4f5a6b',
    description: 'The test instance',
  })
  instance!: string;

  @ApiProperty({ example: 'm-42', description: 'The build asked to stop' })
  build_id!: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T08:00:00.000Z',
    description: 'When the stop was asked for',
  })
  requested!: string;
}

export function toCancelledBuildResponse(cancelled: CancelledBuild): CancelledBuildDto {
  return {
    instance: cancelled.instanceUuid,
    build_id: cancelled.buildId,
    requested: cancelled.requested.toISOString(),
  };
}
