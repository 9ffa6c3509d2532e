import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/** Length of a project key: the instance's URL and the project's path or id. */
export const PROJECT_KEY_LENGTH = 255;

/**
 * Which GitLab project each instance on GitLab CI watches, as `{instance url}/{path}` or
 * `{instance url}#{id}` in lower case (as the crate names it): a `Pipeline Hook` finds its instances by
 * this indexed key (API.md 18). The registry's `resource` column is too wide to index on MariaDB.
 */
@Entity('gitlab_project_instances')
@Index('IDX_gitlab_project_instances_key', ['projectKey'])
export class GitlabProjectInstanceEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_gitlab_project_instances_instance' })
  instance?: object;

  @Column({ name: 'project_key', type: 'varchar', length: PROJECT_KEY_LENGTH })
  projectKey!: string;
}
