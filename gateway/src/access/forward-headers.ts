/**
 * The headers a proxied request carries to an engine. Pure. The engine gets the client's
 * end-to-end headers (cookies, Jupyter's `X-XSRFToken`, the Host that Jupyter compares with
 * Origin), never the client's connection-level ones, and forwarding headers that only this
 * proxy writes: a client cannot make an engine believe it comes from elsewhere.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { engineCookies } from './session.ts';

/** Headers of one connection (RFC 9110 §7.6.1), plus the non-standard ones proxies honour. */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Forwarding headers: ours to write, never a client's to set. */
const FORWARDING: ReadonlySet<string> = new Set([
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-real-ip',
]);

/** What the proxy knows of the request besides its headers. */
export interface ForwardingFacts {
  /** The address of the client's TCP connection. */
  clientAddress: string;
  /** The scheme the client used: that of the public address when one is configured. */
  proto: 'http' | 'https';
  /** Whether the engine gets the client's `Authorization` (engines that verify the token themselves). */
  forwardAuthorization: boolean;
  /** Whether this is a WebSocket upgrade, which keeps `Connection: Upgrade` and `Upgrade: websocket`. */
  websocket: boolean;
}

/** The names a `Connection` header lists: more hop-by-hop headers of that request. */
function connectionTokens(value: string | string[] | undefined): Set<string> {
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    joined
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token !== ''),
  );
}

/** A `Forwarded` node: IPv6 addresses are quoted and bracketed (RFC 7239 §6). */
function forwardedNode(address: string): string {
  return address.includes(':') ? `"[${address}]"` : address;
}

/** A `Forwarded` value: a token as it is, anything else quoted. */
function forwardedValue(value: string): string {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/**
 * The headers to send to the engine for a request with `incoming` headers (typed as incoming
 * ones: the proxy sends a request's own headers on).
 */
export function forwardHeaders(incoming: IncomingHttpHeaders, facts: ForwardingFacts): IncomingHttpHeaders {
  const dropped = connectionTokens(incoming.connection);
  const kept = (name: string): boolean =>
    !HOP_BY_HOP.has(name) &&
    !FORWARDING.has(name) &&
    !dropped.has(name) &&
    (name !== 'authorization' || facts.forwardAuthorization);
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming))
    if (value !== undefined && kept(name)) out[name] = value;
  // The engine keeps its own cookies; the caller's session is the product's alone.
  const cookies = engineCookies(incoming.cookie);
  if (cookies === undefined) delete out.cookie;
  else out.cookie = cookies;
  if (facts.websocket) {
    out['connection'] = 'Upgrade';
    out['upgrade'] = 'websocket';
  }
  return { ...out, ...forwardingOf(incoming.host ?? '', facts) };
}

/** The forwarding headers this proxy writes: the client's address, scheme and Host. */
function forwardingOf(host: string, facts: ForwardingFacts): Record<string, string> {
  const parts = [`for=${forwardedNode(facts.clientAddress)}`, `proto=${facts.proto}`];
  if (host !== '') parts.push(`host=${forwardedValue(host)}`);
  return {
    'x-forwarded-for': facts.clientAddress,
    'x-forwarded-proto': facts.proto,
    ...(host === '' ? {} : { 'x-forwarded-host': host }),
    forwarded: parts.join(';'),
  };
}
