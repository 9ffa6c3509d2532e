import { entityTagOf, matchesIfNoneMatch } from './conditional-read.js';

describe('matchesIfNoneMatch', () => {
  const etag = '"abc123"';

  it.each([
    ['"abc123"', true],
    ['W/"abc123"', true],
    ['"other", "abc123"', true],
    ['"other",W/"abc123" ', true],
    ['*', true],
    ['"other"', false],
    ['"abc1234"', false],
    ['abc123', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });

  it('is false without the header', () => {
    expect(matchesIfNoneMatch(undefined, etag)).toBe(false);
  });
});

describe('entityTagOf', () => {
  it('is a quoted strong tag that follows the bytes', () => {
    const tag = entityTagOf('{"items":[]}');
    expect(tag).toMatch(/^"[\w-]{27}"$/);
    expect(entityTagOf(Buffer.from('{"items":[]}'))).toBe(tag);
    expect(entityTagOf('{"items":[1]}')).not.toBe(tag);
  });
});
