import { historyChart, historyStrip, historySummary } from './chart.js';

const days = [
  { date: '2026-11-22', passed: 2, failed: 0 },
  { date: '2026-11-23', passed: 0, failed: 0 },
  { date: '2026-11-24', passed: 1, failed: 1 },
];

describe('history pictures (API.md 5.4)', () => {
  it('says in words what the picture shows', () => {
    expect(historySummary(days)).toBe('Last 3 days: 3 passed, 1 failed builds; failures on 1 day');
    expect(historySummary([{ date: '2026-11-24', passed: 0, failed: 0 }])).toBe(
      'No finished builds in the last 1 days',
    );
  });

  it('draws one mark per day in the strip: green, grey tick, red', () => {
    const svg = historyStrip(days);
    expect(svg.match(/<rect /g)).toHaveLength(3);
    expect(svg).toMatch(/fill="#1a7f37".*fill="#8c959f".*fill="#cf222e"/);
    expect(svg).toContain(
      'role="img" aria-label="Last 3 days: 3 passed, 1 failed builds; failures on 1 day"',
    );
  });

  it('stacks passed on failed builds, scaled to the busiest day, with a title per day', () => {
    const svg = historyChart(days);
    expect(svg).toContain('<title>2026-11-24: 1 passed, 1 failed</title>');
    expect(svg).toContain('>2</text>');
    // The busiest day's passed bar and the last day's two halves are each the full plot height in total.
    expect(svg).toContain('height="120" fill="#1a7f37"');
    expect(svg.match(/height="60"/g)).toHaveLength(2);
  });
});
