import type { ToolsQuery } from './dto/trs-requests.dto.js';
import type { ToolPage } from './trs.service.js';

/** TRS 2.1.0's paging headers of `GET /tools`, for the OpenAPI document. */
export const PAGING_HEADERS = {
  next_page: {
    description: 'The next page, with the same filters and limit; absent on the last page',
    schema: { type: 'string' },
  },
  last_page: {
    description: 'The last page: the last `limit` tools (`offset=last`)',
    schema: { type: 'string' },
  },
  self_link: { description: 'This page', schema: { type: 'string' } },
  current_offset: { description: 'The start index of this page, or `last`', schema: { type: 'string' } },
  current_limit: { description: 'The most tools a page of this request holds', schema: { type: 'integer' } },
};

/** The paging headers of a page, each link carrying the query's filters. */
export function pagingHeaders(toolsUrl: string, query: ToolsQuery, page: ToolPage): Record<string, string> {
  const link = (offset: number | 'last'): string => {
    const parameters = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && name !== 'offset' && name !== 'limit') {
        parameters.set(name, String(value));
      }
    }
    parameters.set('offset', String(offset));
    parameters.set('limit', String(page.limit));
    return `${toolsUrl}?${parameters.toString()}`;
  };
  const headers: Record<string, string> = {
    self_link: link(page.offset),
    last_page: link('last'),
    current_offset: String(page.offset),
    current_limit: String(page.limit),
  };
  if (page.more && page.offset !== 'last') {
    headers.next_page = link(page.offset + page.limit);
  }
  return headers;
}
