/**
 * Unicode's bidirectional formatting characters (embeddings, overrides, isolates, marks): a name
 * holding one (U+202E RIGHT-TO-LEFT OVERRIDE) reverses the text after it wherever nothing isolates
 * it: a Slack message, an e-mail subject, a page's `<title>`. Pages isolate names in `<bdi>`; where
 * no markup can, the controls are dropped.
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** A name as plain text may show it: without bidirectional controls and without line breaks. */
export function plainName(name: string): string {
  return name.replace(BIDI_CONTROLS, '').replace(/[\r\n]+/g, ' ');
}
