import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * GitHub's API paused by its rate limit for following repositories: no copy polls or registers
 * from GitHub before `pausedUntil` (the limit is the token's, shared by every copy).
 */
@Entity('github_api_pauses')
export class GithubApiPauseEntity {
  /** GITHUB_API_URL. */
  @PrimaryColumn({ name: 'api_url', type: 'varchar', length: 255 })
  apiUrl!: string;

  @Column({ name: 'paused_until', type: 'datetime' })
  pausedUntil!: Date;
}
