import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString } from 'class-validator';
import { REF_KINDS, REF_STATES, type FollowedRefKind } from '../entities/followed-ref.entity.js';
import { MAX_GLOBS } from '../follow-limits.js';
import type { FollowSource } from '../follow-rules.js';
import type { FollowView } from '../follow-view.js';

/** `follow` of `PUT /workflows/{wf_uuid}` (API.md 12); an absent list is empty. */
export class FollowRequestDto {
  @IsOptional()
  @IsArray({ message: 'follow.tags must be an array of glob strings' })
  @ArrayMaxSize(MAX_GLOBS, { message: `follow.tags has at most ${MAX_GLOBS} globs` })
  @IsString({ each: true, message: 'follow.tags must be an array of glob strings' })
  @ApiPropertyOptional({
    type: String,
    isArray: true,
    example: ['v*'],
    description:
      'Tags whose creation registers a version named by the tag (globs: `*` stops at `/`, `**` does not)',
  })
  tags?: string[];

  @IsOptional()
  @IsArray({ message: 'follow.branches must be an array of glob strings' })
  @ArrayMaxSize(MAX_GLOBS, { message: `follow.branches has at most ${MAX_GLOBS} globs` })
  @IsString({ each: true, message: 'follow.branches must be an array of glob strings' })
  @ApiPropertyOptional({
    type: String,
    isArray: true,
    example: ['main'],
    description: 'Branches whose pushes register, or replace, the version named by the branch',
  })
  branches?: string[];
}

export class FollowLastPollDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  at!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'Why the poll failed (the host down or rate-limited: tried again at the next poll; the repository gone)',
  })
  error!: string | null;
}

export class FollowedRefDto {
  @ApiProperty({ enum: REF_KINDS, example: 'tag' })
  type!: FollowedRefKind;

  @ApiProperty({ example: 'v1.1.0' })
  name!: string;

  @ApiProperty({ type: String, nullable: true, example: '4f1c2b0e9d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b' })
  commit!: string | null;

  @ApiProperty({
    enum: REF_STATES.filter((state) => state !== 'seen'),
    example: 'registered',
    description:
      '`pending` (to be registered), `registered`, `failed` (the registration was refused: `reason`), `ignored` ' +
      '(a name that cannot be a version, or a version that exists: `reason`)',
  })
  state!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'v1.1.0',
    description: 'The version registered from it',
  })
  version!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  reason!: string | null;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-26T10:00:05.000Z',
    description: 'When this state was reached',
  })
  at!: string;
}

/** What the workflow's repository follows (API.md 12), and what following did lately. */
export class FollowDto {
  @ApiProperty({
    example: 'nf-core/demo',
    description: 'The repository on its host, `owner/repo` (the owner may be a group path)',
  })
  repository!: string;

  @ApiProperty({ type: String, isArray: true, example: ['v*'] })
  tags!: string[];

  @ApiProperty({ type: String, isArray: true, example: ['main'] })
  branches!: string[];

  @ApiProperty({
    enum: ['api', 'file', 'none'],
    example: 'api',
    description:
      'Where the globs come from: `PUT /workflows/{wf_uuid}`, the repository’s `.lifemonitor.yaml`, or nowhere',
  })
  source!: FollowSource;

  @ApiProperty({
    type: FollowLastPollDto,
    nullable: true,
    description: 'The last poll of the refs; null before the first',
  })
  last_poll!: FollowLastPollDto | null;

  @ApiProperty({
    type: FollowedRefDto,
    isArray: true,
    description: 'What following did lately, the latest first (at most 20)',
  })
  refs!: FollowedRefDto[];
}

export function toFollowResponse(view: FollowView): FollowDto {
  return {
    repository: `${view.owner}/${view.repo}`,
    tags: view.globs.tags,
    branches: view.globs.branches,
    source: view.source,
    last_poll: view.polledAt ? { at: view.polledAt.toISOString(), error: view.pollError } : null,
    refs: view.refs.map((ref) => ({
      type: ref.kind,
      name: ref.name,
      commit: ref.commit,
      state: ref.state,
      version: ref.version,
      reason: ref.reason,
      at: ref.updatedAt.toISOString(),
    })),
  };
}
