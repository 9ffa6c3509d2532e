import { ApiProperty } from '@nestjs/swagger';
import { BuildDto, toBuildResponse } from '../../workflows/index.js';
import type { BuildChangesView } from '../build-changes.service.js';
import type { RunnerInfo } from '../testing-services/testing-service.js';

export class CommitRangeDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'acb5820ced9479c074f688cc328bf03f341a511d',
    description: 'The commit of the last passing build (null without one, or when the CI named none)',
  })
  from!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '5f1d3c2b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
    description: 'The commit of this build (null when the CI named none)',
  })
  to!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example:
      'https://github.com/o/r/compare/acb5820ced9479c074f688cc328bf03f341a511d...5f1d3c2b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
    description:
      "The repository's comparison of the two commits: GitHub's, and Travis's for repositories on GitHub; " +
      'null without both commits or where it cannot be told (Jenkins)',
  })
  compare_url!: string | null;
}

export class RunnerDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Ubuntu 22.04.3 LTS',
    description: 'The operating system (GitHub\'s job log header "Operating System", Travis\'s `os`)',
  })
  os!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'ubuntu-22.04',
    description: 'The runner image (GitHub\'s job log header "Runner Image" → "Image", Travis\'s `dist`)',
  })
  image!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '20240101.1.0',
    description: 'The image\'s version (GitHub\'s "Runner Image" → "Version")',
  })
  version!: string | null;

  @ApiProperty({
    type: String,
    isArray: true,
    example: ['ubuntu-latest'],
    description: "GitHub's labels of the job (its `runs-on`); empty elsewhere",
  })
  labels!: string[];
}

export class RunnerChangeDto {
  @ApiProperty({ type: RunnerDto, nullable: true, description: 'The runner of the last passing build' })
  before!: RunnerDto | null;

  @ApiProperty({ type: RunnerDto, nullable: true, description: 'The runner of this build' })
  after!: RunnerDto | null;
}

export class DurationChangeDto {
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 312,
    description: 'Seconds the last passing build took (null without one)',
  })
  before!: number | null;

  @ApiProperty({ example: 845, description: 'Seconds this build took (0 while it runs)' })
  after!: number;
}

export class FailedJobDto {
  @ApiProperty({ example: 'test (ubuntu-latest, 3.11)' })
  name!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'failure',
    description: "The CI's own word: GitHub's conclusion, Travis's state",
  })
  conclusion!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://github.com/o/r/actions/runs/8765/job/4321',
    description: "The job's page, when the CI gives one",
  })
  url!: string | null;
}

export class FailedStepDto {
  @ApiProperty({ example: 'test (ubuntu-latest, 3.11)', description: 'The job it belongs to' })
  job!: string;

  @ApiProperty({ example: 'Run planemo test' })
  name!: string;

  @ApiProperty({ type: String, nullable: true, example: 'failure', description: "GitHub's conclusion" })
  conclusion!: string | null;
}

export class BuildChangesDto {
  @ApiProperty({
    type: BuildDto,
    nullable: true,
    description: "The instance's latest passed build that started before this one; null when it has none",
  })
  last_passing!: BuildDto | null;

  @ApiProperty({ type: CommitRangeDto })
  commits!: CommitRangeDto;

  @ApiProperty({
    type: RunnerChangeDto,
    description: 'What each build ran on; null where the CI does not say',
  })
  runner!: RunnerChangeDto;

  @ApiProperty({ type: DurationChangeDto })
  duration_s!: DurationChangeDto;

  @ApiProperty({
    type: FailedJobDto,
    isArray: true,
    description: "This build's jobs that did not pass (the selected ones, for an instance with `#job=`)",
  })
  failed_jobs!: FailedJobDto[];

  @ApiProperty({
    type: FailedStepDto,
    isArray: true,
    description: 'The steps of those jobs that did not pass (GitHub; Travis has no steps)',
  })
  failed_steps!: FailedStepDto[];
}

function toRunner(runner: RunnerInfo | null): RunnerDto | null {
  return runner === null
    ? null
    : { os: runner.os, image: runner.image, version: runner.version, labels: [...runner.labels] };
}

export function toBuildChangesResponse(view: BuildChangesView, baseUrl: string): BuildChangesDto {
  return {
    last_passing:
      view.lastPassing === null
        ? null
        : toBuildResponse(view.lastPassing, view.instance, view.lastChecks, baseUrl),
    commits: { from: view.commits.from, to: view.commits.to, compare_url: view.commits.compareUrl },
    runner: { before: toRunner(view.runner.before), after: toRunner(view.runner.after) },
    duration_s: { before: view.durationSeconds.before, after: view.durationSeconds.after },
    failed_jobs: view.failedJobs.map((job) => ({ ...job })),
    failed_steps: view.failedSteps.map((step) => ({ ...step })),
  };
}
