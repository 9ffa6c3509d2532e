import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DESIGN.md: "GitLab is one class in each seam: a TestingService and a RepositoryHost, plus its
 * webhook controller beside GitHub's. Nothing outside them names it." The service's code (src/,
 * migrations/; specs aside) names GitLab only in those classes (and the webhook's table), in the
 * lines that register them, and in its setting.
 */
const OWN_FILES = new Set([
  'src/repositories/hosts/gitlab-repository.ts',
  'src/test-monitoring/testing-services/gitlab.service.ts',
  'src/test-monitoring/testing-services/gitlab-pipelines.ts',
  'src/notifications/gitlab-webhooks.controller.ts',
  'src/notifications/gitlab-webhooks.service.ts',
  'src/notifications/entities/gitlab-project-instance.entity.ts',
  'migrations/1795790000001-gitlab-project-instances.ts',
]);

/** A registration: an import or re-export of one of them, or an entry of a list of classes. */
const REGISTRATION =
  /^\s*(import \{ [\w, ]*Gitlab\w+[\w, ]* \} from '[^']+';|export \{ \w+ \} from '[^']+';|Gitlab\w+,|const HOSTS = \[[\w, ]+\];)$/;
/** Its setting. */
const SETTING = /GITLAB_WEBHOOK_SECRET|gitlabWebhookSecret|GitLab webhooks/;

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      return sources(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('the seam bar: GitLab', () => {
  it('is named only by its classes, their registration lines and its setting', () => {
    const strays = [...sources('src'), ...sources('migrations')]
      .filter((path) => !OWN_FILES.has(path))
      .flatMap((path) =>
        readFileSync(join(path), 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            /gitlab/i.test(line) && !REGISTRATION.test(line) && !SETTING.test(line)
              ? [`${path}:${index + 1}: ${line.trim()}`]
              : [],
          ),
      );
    expect(strays).toEqual([]);
  });

  it('finds a stray mention', () => {
    const line = '    if (service.type === "gitlab") {';
    expect(/gitlab/i.test(line) && !REGISTRATION.test(line) && !SETTING.test(line)).toBe(true);
  });
});
