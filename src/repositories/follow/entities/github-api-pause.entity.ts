import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A repository host's API paused by its rate limit for following repositories: no copy polls or
 * registers from it before `pausedUntil` (the limit is the token's, shared by every copy). The
 * table keeps its first name, from when GitHub was the only host.
 */
@Entity('github_api_pauses')
export class GithubApiPauseEntity {
  /** The host's API (RepositoryHost.apiUrl): GITHUB_API_URL for GitHub. */
  @PrimaryColumn({ name: 'api_url', type: 'varchar', length: 255 })
  apiUrl!: string;

  @Column({ name: 'paused_until', type: 'datetime' })
  pausedUntil!: Date;
}
