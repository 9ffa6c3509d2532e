import { pagingHeaders } from './paging.js';

const URL = 'http://localhost:3000/ga4gh/trs/v2/tools';

describe('pagingHeaders (TRS 2.1.0)', () => {
  it('links this page, the next one and the last one, keeping the filters', () => {
    expect(
      pagingHeaders(
        URL,
        { organization: 'alice', offset: '20', limit: 10 },
        { tools: [], offset: 20, limit: 10, more: true },
      ),
    ).toEqual({
      self_link: `${URL}?organization=alice&offset=20&limit=10`,
      next_page: `${URL}?organization=alice&offset=30&limit=10`,
      last_page: `${URL}?organization=alice&offset=last&limit=10`,
      current_offset: '20',
      current_limit: '10',
    });
  });

  it('has no next page on the last one, nor from `last`', () => {
    expect(pagingHeaders(URL, {}, { tools: [], offset: 0, limit: 1000, more: false })).not.toHaveProperty(
      'next_page',
    );
    const last = pagingHeaders(URL, { offset: 'last' }, { tools: [], offset: 'last', limit: 5, more: false });
    expect(last).not.toHaveProperty('next_page');
    expect(last.self_link).toBe(`${URL}?offset=last&limit=5`);
  });
});
