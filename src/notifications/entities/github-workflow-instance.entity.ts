import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/** Length of a `owner/repo/workflow` key (GitHub: owner 39, repository 100, a workflow file name). */
export const WORKFLOW_KEY_LENGTH = 255;

/**
 * Which GitHub workflow each instance on GitHub Actions watches, as `owner/repo/<file or id>` in
 * lower case (GitHub's names are case-insensitive): a `workflow_run` webhook finds its instances
 * by this indexed key. The registry's `resource` column is too wide to index on MariaDB.
 */
@Entity('github_workflow_instances')
@Index('IDX_github_workflow_instances_key', ['workflowKey'])
export class GithubWorkflowInstanceEntity {
  @PrimaryColumn({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_github_workflow_instances_instance' })
  instance?: object;

  @Column({ name: 'workflow_key', type: 'varchar', length: WORKFLOW_KEY_LENGTH })
  workflowKey!: string;
}

/**
 * The key of a GitHub Actions resource (`repos/{owner}/{repo}/actions/workflows/{file or id}`),
 * or undefined for any other form.
 */
export function workflowKeyOf(resource: string): string | undefined {
  const match = /^repos\/([^/]+)\/([^/]+)\/actions\/workflows\/([^/]+)$/.exec(resource);
  if (!match) {
    return undefined;
  }
  const key = `${match[1]}/${match[2]}/${match[3]}`.toLowerCase();
  return key.length <= WORKFLOW_KEY_LENGTH ? key : undefined;
}
