import { plainName } from '../common/bidi.js';
import type { AggregateTestStatus } from './aggregate-status.js';

/** What a badge says and in which colours (API.md 5.2). */
export interface Badge {
  label: string;
  message: string;
  /** The right part's fill in the SVG. */
  color: string;
  /** The shields.io colour name of the JSON endpoint. */
  shieldsColor: string;
}

export const DEFAULT_BADGE_LABEL = 'tests';
export const BADGE_LABEL_MAX_LENGTH = 32;

const LOOKS: Record<AggregateTestStatus, { message: string; color: string; shieldsColor: string }> = {
  all_passing: { message: 'passing', color: '#4c1', shieldsColor: 'brightgreen' },
  some_passing: { message: 'some passing', color: '#dfb317', shieldsColor: 'yellow' },
  all_failing: { message: 'failing', color: '#e05d44', shieldsColor: 'red' },
  not_available: { message: 'no builds', color: '#9f9f9f', shieldsColor: 'lightgrey' },
};

const LABEL_COLOR = '#555';

/**
 * What a badge and a status page say of a version's state. A version without any build of its own
 * yet (API.md 7.2: a new version's window starts at its registration) says so, naming itself,
 * rather than a bare "no builds" that reads as broken CI.
 */
export function statusMessage(
  aggregate: AggregateTestStatus,
  unbuiltVersion?: string,
  infrastructureOnly = false,
): string {
  if (aggregate === 'not_available' && unbuiltVersion !== undefined) {
    return `no builds yet for ${plainName(unbuiltVersion)}`;
  }
  // API.md 16: the CI failed, not the tests; LifeMonitor's aggregate stays all_failing.
  return aggregate === 'all_failing' && infrastructureOnly
    ? 'failing (infrastructure)'
    : LOOKS[aggregate].message;
}

/** `unbuiltVersion`: the version's name when it has no build at all yet. */
export function badgeOf(
  aggregate: AggregateTestStatus,
  stale: boolean,
  label: string,
  unbuiltVersion?: string,
  infrastructureOnly = false,
): Badge {
  const look = LOOKS[aggregate];
  const message = statusMessage(aggregate, unbuiltVersion, infrastructureOnly);
  return {
    label,
    message: stale ? `${message} (stale)` : message,
    color: look.color,
    shieldsColor: look.shieldsColor,
  };
}

/** The shields.io endpoint body (https://shields.io/badges/endpoint-badge). */
export function badgeJson(badge: Badge): {
  schemaVersion: 1;
  label: string;
  message: string;
  color: string;
} {
  return { schemaVersion: 1, label: badge.label, message: badge.message, color: badge.shieldsColor };
}

/**
 * Advance widths of printable ASCII at 11px in Verdana's metrics (as DejaVu Sans, Verdana's
 * stand-in on Linux, renders them in Chromium; the two differ by well under the padding).
 * Index = char code - 32.
 */
const WIDTHS = [
  3.5, 4.41, 5.06, 9.22, 7, 10.45, 8.58, 3.02, 4.29, 4.29, 5.5, 9.22, 3.5, 3.97, 3.5, 3.71, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 3.71, 3.71, 9.22, 9.22, 9.22, 5.84, 11, 7.52, 7.55, 7.68, 8.47, 6.95, 6.33, 8.52, 8.27, 3.24,
  3.24, 7.21, 6.13, 9.49, 8.23, 8.66, 6.63, 8.66, 7.64, 6.98, 6.72, 8.05, 7.52, 10.88, 7.54, 6.72, 7.54, 4.29,
  3.71, 4.29, 9.22, 5.5, 5.5, 6.74, 6.98, 6.05, 6.98, 6.77, 3.87, 6.98, 6.97, 3.06, 3.06, 6.37, 3.06, 10.72,
  6.97, 6.73, 6.98, 6.98, 4.52, 5.73, 4.31, 6.97, 6.51, 9, 6.51, 6.51, 5.77, 7, 3.71, 7, 9.22,
];
/** Anything else (accents, CJK, emoji) is counted as wide as the widest ASCII glyph, so it always fits. */
const WIDE = 13;
/** Space each side of a text inside its part. */
const PADDING = 6;

/** The width the text needs at 11px, rounded up to whole pixels; a little generous, never short. */
export function textWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    width += code >= 32 && code < 127 ? WIDTHS[code - 32] : WIDE;
  }
  return Math.ceil(width * 1.05);
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * A flat two-part badge in the shields.io style: the label on grey, the message on the
 * status colour; its <title> (and aria-label) holds the same text for screen readers. No
 * element id, so several badges can sit inline in one page.
 */
export function renderBadgeSvg(badge: Badge): string {
  const labelWidth = textWidth(badge.label) + 2 * PADDING;
  const messageWidth = textWidth(badge.message) + 2 * PADDING;
  const width = labelWidth + messageWidth;
  const title = escapeXml(`${badge.label}: ${badge.message}`);
  const label = escapeXml(badge.label);
  const message = escapeXml(badge.message);
  const text = (x: number, content: string, part: string): string =>
    `<text x="${x / 2}" y="15" fill="#010101" fill-opacity=".3" aria-hidden="true">${content}</text>` +
    `<text x="${x / 2}" y="14" data-part="${part}">${content}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${title}">` +
    `<title>${title}</title>` +
    `<rect data-part="label" width="${labelWidth}" height="20" rx="3" fill="${LABEL_COLOR}"/>` +
    `<rect data-part="message" x="${labelWidth}" width="${messageWidth}" height="20" rx="3" fill="${badge.color}"/>` +
    // Squares off the inner corners of the two rounded parts.
    `<rect x="${labelWidth - 4}" width="8" height="20" fill="${badge.color}"/>` +
    `<rect x="${labelWidth - 4}" width="4" height="20" fill="${LABEL_COLOR}"/>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">` +
    text(labelWidth, label, 'label') +
    text(2 * labelWidth + messageWidth, message, 'message') +
    `</g></svg>`
  );
}
