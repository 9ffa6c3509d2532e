import type { DayCount } from '../test-monitoring/index.js';

/**
 * Inline SVG pictures of the daily history (API.md 5.4), drawn here rather than by a script in
 * the page (the pages need no JavaScript). Colours meet WCAG 2.1's 3:1 for graphics on white
 * (1.4.11); each picture carries a text alternative, and what it shows is also in the page's text.
 */
const PASS = '#1a7f37';
const FAIL = '#cf222e';
const EMPTY = '#8c959f';

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function totals(days: readonly DayCount[]): { passed: number; failed: number } {
  return days.reduce((sum, day) => ({ passed: sum.passed + day.passed, failed: sum.failed + day.failed }), {
    passed: 0,
    failed: 0,
  });
}

/** The alternative text of a history: what a person would read off the picture. */
export function historySummary(days: readonly DayCount[]): string {
  const { passed, failed } = totals(days);
  if (passed + failed === 0) {
    return `No finished builds in the last ${days.length} days`;
  }
  const failingDays = days.filter((day) => day.failed > 0).length;
  return (
    `Last ${days.length} days: ${passed} passed, ${failed} failed builds` +
    (failingDays > 0 ? `; failures on ${failingDays} ${failingDays === 1 ? 'day' : 'days'}` : '')
  );
}

/**
 * A strip of one mark per day for a list row: green (all passed), red (some failed), a short
 * grey tick (no finished build).
 */
export function historyStrip(days: readonly DayCount[]): string {
  const step = 5;
  const height = 16;
  const marks = days
    .map((day, index) => {
      const x = index * step;
      if (day.passed + day.failed === 0) {
        return `<rect x="${x}" y="${height - 3}" width="3" height="3" fill="${EMPTY}"/>`;
      }
      return `<rect x="${x}" width="3" height="${height}" fill="${day.failed > 0 ? FAIL : PASS}"/>`;
    })
    .join('');
  const label = escapeXml(historySummary(days));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="strip" width="${days.length * step}" height="${height}" ` +
    `viewBox="0 0 ${days.length * step} ${height}" role="img" aria-label="${label}"><title>${label}</title>${marks}</svg>`
  );
}

/**
 * A bar chart of the days: per day, passed builds stacked on failed ones, with the highest count
 * and the first, middle and last dates as axis labels.
 */
export function historyChart(days: readonly DayCount[]): string {
  const bar = 16;
  const gap = 4;
  const plot = 120;
  const left = 32;
  const top = 10;
  const width = left + days.length * (bar + gap) + 8;
  const height = top + plot + 36;
  const highest = Math.max(1, ...days.map((day) => day.passed + day.failed));
  const scale = (count: number): number => (count / highest) * plot;
  const bars = days
    .map((day, index) => {
      const x = left + index * (bar + gap);
      const failed = scale(day.failed);
      const passed = scale(day.passed);
      const base = top + plot;
      const tip = `${day.date}: ${day.passed} passed, ${day.failed} failed`;
      if (day.passed + day.failed === 0) {
        return `<rect x="${x}" y="${base - 2}" width="${bar}" height="2" fill="${EMPTY}"><title>${tip}</title></rect>`;
      }
      return (
        `<g><title>${tip}</title>` +
        (failed > 0
          ? `<rect x="${x}" y="${base - failed}" width="${bar}" height="${failed}" fill="${FAIL}"/>`
          : '') +
        (passed > 0
          ? `<rect x="${x}" y="${base - failed - passed}" width="${bar}" height="${passed}" fill="${PASS}"/>`
          : '') +
        `</g>`
      );
    })
    .join('');
  const labelAt = (index: number, anchor: string): string => {
    const day = days[index];
    return day
      ? `<text x="${left + index * (bar + gap) + bar / 2}" y="${top + plot + 18}" text-anchor="${anchor}">${day.date}</text>`
      : '';
  };
  const summary = escapeXml(historySummary(days));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}"><title>${summary}</title>` +
    `<g font-family="system-ui, sans-serif" font-size="12" fill="#24292f">` +
    `<text x="${left - 6}" y="${top + 4}" text-anchor="end">${highest}</text>` +
    `<text x="${left - 6}" y="${top + plot}" text-anchor="end">0</text>` +
    labelAt(0, 'start') +
    labelAt(Math.floor(days.length / 2), 'middle') +
    labelAt(days.length - 1, 'end') +
    `</g><line x1="${left - 2}" x2="${width - 4}" y1="${top + plot}" y2="${top + plot}" stroke="#57606a"/>` +
    bars +
    `</svg>`
  );
}
