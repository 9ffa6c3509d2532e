import { entityTagOf, matchesIfNoneMatch, sharedConditional } from './conditional-read.js';

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

describe('sharedConditional', () => {
  it('answers every request from one source with one reply, its body built and serialised once', () => {
    const views = [{ uuid: 'a' }, { uuid: 'b' }];
    let built = 0;
    const bodyOf = (source: typeof views) => {
      built += 1;
      return { items: source.map((view) => view.uuid) };
    };
    const first = sharedConditional(views, bodyOf);
    const second = sharedConditional(views, bodyOf);
    expect(second).toBe(first);
    expect(built).toBe(1);
    expect(first.representation()).toBe(second.representation());
    expect(first.representation()).toEqual({
      json: '{"items":["a","b"]}',
      etag: entityTagOf('{"items":["a","b"]}'),
    });
  });

  it('builds another reply for another source, even one equal to the first', () => {
    const bodyOf = (source: string[]) => ({ items: source });
    expect(sharedConditional(['a'], bodyOf)).not.toBe(sharedConditional(['a'], bodyOf));
  });
});
