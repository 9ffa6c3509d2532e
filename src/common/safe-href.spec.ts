import { safeBuildHref, safeHref } from './safe-href.js';

describe('safeHref', () => {
  it('keeps http(s) URLs and never makes a link of anything else', () => {
    expect(safeHref('https://github.com/o/r')).toBe('https://github.com/o/r');
    expect(safeHref('http://ci.example.org/job/x')).toBe('http://ci.example.org/job/x');
    expect(safeHref('javascript:alert(1)')).toBeUndefined();
    expect(safeHref('data:text/html,x')).toBeUndefined();
    expect(safeHref('not a url')).toBeUndefined();
    expect(safeHref(null)).toBeUndefined();
  });
});

describe('safeBuildHref', () => {
  it("keeps a path of this service (a managed run's log) as a same-site link", () => {
    expect(safeBuildHref('/instances/3f1c/builds/m-1/logs')).toBe('/instances/3f1c/builds/m-1/logs');
    expect(safeBuildHref('https://github.com/o/r/actions/runs/1')).toBe(
      'https://github.com/o/r/actions/runs/1',
    );
  });

  it('makes no link of what would leave the site or is not http(s)', () => {
    expect(safeBuildHref('//evil.example/x')).toBeUndefined();
    expect(safeBuildHref('/\\evil.example/x')).toBeUndefined();
    expect(safeBuildHref('javascript:alert(1)')).toBeUndefined();
    expect(safeBuildHref('')).toBeUndefined();
  });
});
