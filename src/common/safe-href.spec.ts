import { safeHref } from './safe-href.js';

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
