import { ciResourcePage, safeHref } from './ci-links.js';

describe('links to CI pages (API.md 5.4)', () => {
  it('links a GitHub Actions workflow on github.com and on GitHub Enterprise', () => {
    expect(ciResourcePage('github', 'https://api.github.com', 'repos/o/r/actions/workflows/ci.yml')).toBe(
      'https://github.com/o/r/actions/workflows/ci.yml',
    );
    expect(ciResourcePage('github', 'https://ghe.example.org/api/v3', 'repos/o/r/actions/workflows/42')).toBe(
      'https://ghe.example.org/o/r/actions/workflows/42',
    );
  });

  it('links a Travis repository by slug on the web site, and a Jenkins job under its server', () => {
    expect(ciResourcePage('travis', 'https://api.travis-ci.com', 'repo/o%2Fr')).toBe(
      'https://app.travis-ci.com/github/o/r',
    );
    expect(ciResourcePage('jenkins', 'https://ci.example.org/', 'job/a/job/b')).toBe(
      'https://ci.example.org/job/a/job/b',
    );
  });

  it('never makes a link of anything but http(s)', () => {
    expect(safeHref('javascript:alert(1)')).toBeUndefined();
    expect(safeHref('data:text/html,x')).toBeUndefined();
    expect(safeHref('not a url')).toBeUndefined();
    expect(safeHref(null)).toBeUndefined();
    expect(ciResourcePage('jenkins', 'javascript:alert(1)', 'job/x')).toBeUndefined();
  });
});
