/**
 * Path templates of google.api.http bindings, e.g. `/v1/{name=workspaces/*\/daiEngines/*}:pause`:
 * literal segments, `*` (one segment), `**` (the rest), variables `{field.path=…}` (default `*`)
 * and a trailing `:verb`.
 *
 * Matching works on the percent-decoded path, because clients encode whole resource names into
 * one variable (`/v1/workspaces%2Fdefault%2FdaiEngines%2Fe1:pause`); resource ids never contain
 * `/` or `:`, so decoding first is unambiguous.
 */

type Part = { literal: string } | { wildcard: 'one' | 'rest' };

interface Capture {
  field: string;
  start: number;
  /** Number of parts the variable spans. */
  length: number;
}

/** A parsed path template. */
export interface PathPattern {
  readonly template: string;
  readonly parts: readonly Part[];
  readonly captures: readonly Capture[];
  readonly verb: string | undefined;
}

/** Parses a template. @throws SyntaxError on a malformed template */
export function parsePattern(template: string): PathPattern {
  if (!template.startsWith('/')) throw new SyntaxError(`Path template must start with "/": ${template}`);
  const { body, verb } = splitTemplateVerb(template.slice(1));
  const parts: Part[] = [];
  const captures: Capture[] = [];
  for (const token of splitOutsideBraces(body)) {
    const variable = /^\{([A-Za-z0-9_.]+)(?:=(.+))?\}$/.exec(token);
    if (variable) {
      const inner = (variable[2] ?? '*').split('/').map(toPart);
      captures.push({ field: variable[1] ?? '', start: parts.length, length: inner.length });
      parts.push(...inner);
    } else {
      if (token.includes('{') || token.includes('}'))
        throw new SyntaxError(`Bad segment "${token}" in ${template}`);
      parts.push(toPart(token));
    }
  }
  const restAt = parts.findIndex((p) => 'wildcard' in p && p.wildcard === 'rest');
  if (restAt !== -1 && restAt !== parts.length - 1)
    throw new SyntaxError(`"**" must come last in ${template}`);
  return { template, parts, captures, verb };
}

function toPart(segment: string): Part {
  if (segment === '*') return { wildcard: 'one' };
  if (segment === '**') return { wildcard: 'rest' };
  if (segment === '') throw new SyntaxError('Empty path segment');
  return { literal: segment };
}

/** The template without its `:verb`; a `:` inside braces belongs to no verb. */
function splitTemplateVerb(body: string): { body: string; verb: string | undefined } {
  const lastBrace = body.lastIndexOf('}');
  const colon = body.indexOf(':', lastBrace + 1);
  return colon === -1
    ? { body, verb: undefined }
    : { body: body.slice(0, colon), verb: body.slice(colon + 1) };
}

function splitOutsideBraces(body: string): string[] {
  const tokens: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of body) {
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (ch === '/' && depth === 0) {
      tokens.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  tokens.push(current);
  return tokens;
}

/** A request path split for matching: decoded segments and the verb. */
export interface SplitPath {
  segments: string[];
  verb: string | undefined;
}

/**
 * Decodes a request path (without its query) and splits off the verb after the last `:` of the
 * last segment. Returns `undefined` for a path that is not valid percent-encoding.
 */
export function splitPath(rawPath: string): SplitPath | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const segments = decoded.replace(/^\//, '').split('/');
  const last = segments[segments.length - 1] ?? '';
  const colon = last.lastIndexOf(':');
  if (colon === -1) return { segments, verb: undefined };
  segments[segments.length - 1] = last.slice(0, colon);
  return { segments, verb: last.slice(colon + 1) };
}

/** The variables of `pattern` in `path`, by field path, or `undefined` when it does not match. */
export function matchPattern(pattern: PathPattern, path: SplitPath): Record<string, string> | undefined {
  if (pattern.verb !== path.verb || !segmentsMatch(pattern.parts, path.segments)) return undefined;
  const values: Record<string, string> = {};
  for (const capture of pattern.captures) {
    const endsWithRest = isRest(pattern.parts[capture.start + capture.length - 1]);
    const end = endsWithRest ? path.segments.length : capture.start + capture.length;
    values[capture.field] = path.segments.slice(capture.start, end).join('/');
  }
  return values;
}

function segmentsMatch(parts: readonly Part[], segments: readonly string[]): boolean {
  const rest = isRest(parts[parts.length - 1]);
  const fixed = rest ? parts.length - 1 : parts.length;
  if (rest ? segments.length < fixed : segments.length !== fixed) return false;
  return parts.slice(0, fixed).every((part, i) => {
    const segment = segments[i] ?? '';
    return 'literal' in part ? part.literal === segment : segment !== '';
  });
}

function isRest(part: Part | undefined): boolean {
  return part !== undefined && 'wildcard' in part && part.wildcard === 'rest';
}
