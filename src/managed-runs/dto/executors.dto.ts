import { ApiProperty } from '@nestjs/swagger';
import { ENGINES } from '../executors/executor.js';
import type { ExecutorView } from '../executors.service.js';

export class EngineDto {
  @ApiProperty({ enum: ENGINES, example: 'cwltool' })
  engine!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '/usr/bin/cwltool 3.1.20230209161050',
    description: 'As the engine reports it',
  })
  version!: string | null;
}

export class ExecutorDto {
  @ApiProperty({
    example: 'local',
    description: "The executor's name in EXECUTORS_FILE: what a managed instance's `resource` names",
  })
  name!: string;

  @ApiProperty({ example: 'local', description: 'Its type (`local`: runner processes of this service)' })
  type!: string;

  @ApiProperty({
    type: [EngineDto],
    description:
      'The engines its runners found installed (each seen in the last three minutes); empty while no runner runs',
  })
  engines!: EngineDto[];

  @ApiProperty({ example: 2, description: 'Runners that reported in the last three minutes' })
  runners!: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '2026-11-29T09:00:00.000Z',
    description: 'When a runner last reported',
  })
  last_seen!: string | null;
}

export class ExecutorListDto {
  @ApiProperty({ type: [ExecutorDto] })
  items!: ExecutorDto[];
}

export function toExecutorList(views: readonly ExecutorView[]): ExecutorListDto {
  return {
    items: views.map((view) => ({
      name: view.name,
      type: view.type,
      engines: view.engines.map((engine) => ({ engine: engine.engine, version: engine.version })),
      runners: view.runners,
      last_seen: view.lastSeen?.toISOString() ?? null,
    })),
  };
}
