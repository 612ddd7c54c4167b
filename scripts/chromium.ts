/**
 * Debian's Chromium as the browser tests and the Lighthouse bench start it. This machine's
 * network is closed: without these flags Chromium keeps trying Google's services at start.
 */

/** The browser binary; playwright-core and Lighthouse bring none of their own. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Flags for a headless run that reaches for nothing but the pages it is given. */
export const QUIET_CHROMIUM_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
