import { loadConfig } from '../../config/app-config.js';
import { GitlabRepositories } from './gitlab-repository.js';

describe('GitLab project links', () => {
  const hosts = new GitlabRepositories(
    loadConfig({
      DATA_DIR: '/nonexistent',
      JWT_SECRET: 'x'.repeat(40),
    }),
  );
  const parse = (link: string) => hosts.parseLink(link);

  it('reads a project on gitlab.com, in a nested group, with .git or a tree ref', () => {
    expect(parse('https://gitlab.com/group/sub/project')).toEqual({
      site: 'https://gitlab.com',
      owner: 'group/sub',
      repo: 'project',
    });
    expect(parse('https://gitlab.com/group/project.git')).toMatchObject({ owner: 'group', repo: 'project' });
    expect(parse('https://gitlab.com/group/project/-/tree/release/1.0')).toMatchObject({
      ref: 'release/1.0',
    });
  });

  it('leaves links elsewhere and the files GitLab serves to the ordinary download', () => {
    expect(parse('https://github.com/group/project')).toBeUndefined();
    expect(parse('https://gitlab.example.org/group/project')).toBeUndefined();
    expect(parse('https://gitlab.com/group/project/-/raw/main/ro-crate-metadata.json')).toBeUndefined();
    expect(parse('https://gitlab.com/group/project/-/archive/main/project-main.zip')).toBeUndefined();
    expect(parse('https://gitlab.com/group/project/uploads/0123abcd/crate.zip')).toBeUndefined();
  });

  it('refuses with a 400 what names no project: pages, climbing paths, encoded slashes, bad refs', () => {
    for (const link of [
      'https://gitlab.com/',
      'https://gitlab.com/group',
      'https://gitlab.com/explore/projects',
      'https://gitlab.com/group/../admin/project',
      'https://gitlab.com/group/%2e%2e/project',
      'https://gitlab.com/group%2Fsub/project',
      'https://gitlab.com/group/project/-/tree/a..b',
      'https://gitlab.com/-group/project',
    ]) {
      expect(() => parse(link)).toThrow(expect.objectContaining({ kind: 'invalid_input' }));
    }
  });

  it('names the rocLink of a followed ref so that it reads back to the project and ref', () => {
    const link = { site: 'https://gitlab.com', owner: 'group/sub', repo: 'project' };
    expect(parse(hosts.refLink(link, 'feature/x'))).toEqual({ ...link, ref: 'feature/x' });
    expect(hosts.apiUrl(link)).toBe('https://gitlab.com/api/v4');
  });
});
