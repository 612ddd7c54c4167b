/**
 * How wide a line of text is drawn, estimated without a browser: the layout needs box sizes
 * before any font is at hand. Widths are Helvetica's (in thousandths of the font size), widened
 * by a margin because readers' sans-serif fonts (DejaVu Sans, Segoe UI, Roboto) run wider.
 */
/** The characters of a string, by code point (the table has no combining characters). */
const chars = (text: string): string[] => text.match(/./gsu) ?? [];

const WIDTHS: Record<string, number> = {
  ...Object.fromEntries(chars('abdeghnopqu0123456789_?#$').map((c) => [c, 556])),
  ...Object.fromEntries(chars('ckvxyzJ').map((c) => [c, 500])),
  ...Object.fromEntries(chars('fijlt.,:;/ ·I!|').map((c) => [c, 278])),
  ...Object.fromEntries(chars('r-()[]{}').map((c) => [c, 333])),
  ...Object.fromEntries(chars('ABEKPSVXY').map((c) => [c, 667])),
  ...Object.fromEntries(chars('CDHNRUw').map((c) => [c, 722])),
  ...Object.fromEntries(chars('GOQ').map((c) => [c, 778])),
  ...Object.fromEntries(chars('FTZ').map((c) => [c, 611])),
  L: 556,
  m: 833,
  M: 833,
  W: 944,
  "'": 191,
  '’': 222,
  '+': 584,
};

/** A character the table does not know is taken to be as wide as a capital. */
const UNKNOWN = 667;
const MARGIN = 1.12;

/** The drawn width, in pixels, of one line of `text` at `fontSize` pixels. */
export function textWidth(text: string, fontSize: number): number {
  const thousandths = chars(text).reduce((sum, c) => sum + (WIDTHS[c] ?? UNKNOWN), 0);
  return Math.ceil((thousandths / 1000) * fontSize * MARGIN);
}
