/**
 * What the proxy answers instead of an engine that cannot take the request: a JSON error of the
 * API's model for programs, a small page for browsers. Pure. Never a bare 502 for an engine that
 * is simply not running: the answer names its state and whether waiting helps.
 */
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';

/** An answer the proxy writes itself. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** States an engine passes through on its way to RUNNING: worth retrying soon. */
const ON_THE_WAY: ReadonlySet<string> = new Set(['STATE_STARTING', 'STATE_CONNECTING']);
/** Seconds a client waits before it asks a starting engine again. */
export const RETRY_AFTER_SECONDS = 5;

/** The state without its `STATE_` prefix, as the page shows it. */
function shortState(state: string): string {
  return state.replace(/^STATE_/, '');
}

/**
 * The error for an engine in `state` other than RUNNING: UNAVAILABLE (503, retry) while it
 * starts, FAILED_PRECONDITION (the API's model: HTTP 400, like any in-engine call of a sandbox
 * that is not running) once it is paused, failed, terminated or going away.
 */
export function notRunningError(name: string, state: string): ApiError {
  if (ON_THE_WAY.has(state))
    return new ApiError(
      Code.UNAVAILABLE,
      `The engine "${name}" is not running yet (it is ${state}); retry in a moment`,
      { reason: 'ENGINE_STARTING' },
    );
  return new ApiError(
    Code.FAILED_PRECONDITION,
    `The engine "${name}" is not running (it is ${state}); resume it to open it`,
    { reason: 'ENGINE_NOT_RUNNING' },
  );
}

/** The error for a RUNNING engine whose server has no ready address yet (it is catching up). */
export function noAddressError(name: string): ApiError {
  return new ApiError(Code.UNAVAILABLE, `The engine "${name}" has no ready server yet; retry in a moment`, {
    reason: 'ENGINE_STARTING',
  });
}

/** The error for a RUNNING engine whose server did not take the connection. */
export function unreachableError(name: string, cause: unknown): ApiError {
  return new ApiError(
    Code.UNAVAILABLE,
    `The engine "${name}" is running but did not answer; retry, or look at its logs`,
    {
      reason: 'ENGINE_UNREACHABLE',
      cause,
    },
  );
}

/** Whether a request prefers HTML: a browser's navigation (`Accept: text/html…`). */
export function wantsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/html\b/i.test(accept);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * The answer for `error` (an ApiError of the proxy or of authentication and authorization):
 * its status (or `httpStatus`), a `Retry-After` for UNAVAILABLE, and a google.rpc.Status body,
 * or a page saying the same to a browser.
 */
export function errorAnswer(
  error: ApiError,
  options: {
    html: boolean;
    state?: string;
    httpStatus?: number;
    /** Where the page's Resume button posts, for a caller who may resume the engine. */
    resumeAction?: string;
  },
): Answer {
  const status = options.httpStatus ?? error.httpStatus;
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (error.code === Code.UNAVAILABLE) headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  if (error.code === Code.UNAUTHENTICATED) headers['www-authenticate'] = 'Bearer realm="ai-engine-manager"';
  if (!options.html) {
    const body = error.toStatus();
    if (options.state !== undefined)
      Object.assign(body.details[0] ?? {}, { metadata: { state: options.state } });
    return {
      status,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    };
  }
  const title = options.state === undefined ? 'Engine unavailable' : `Engine ${shortState(options.state)}`;
  const refresh =
    error.code === Code.UNAVAILABLE ? `<meta http-equiv="refresh" content="${RETRY_AFTER_SECONDS}">` : '';
  const resume =
    options.resumeAction === undefined
      ? ''
      : `<form method="post" action="${escapeHtml(options.resumeAction)}"><button type="submit">Resume</button></form>`;
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${refresh}<title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(error.message)}</p>${resume}</body></html>
`;
  return { status, headers: { ...headers, 'content-type': 'text/html; charset=utf-8' }, body };
}
