/**
 * Which engine a request to the access proxy is for, read from its raw request target. Pure: the
 * proxy decides on the engine named here, checks the caller's access to exactly that engine, and
 * forwards the raw target unchanged, so the path must not be able to mean anything else further
 * on — no encoded slash, no dot segment, no second layer of encoding that a server behind might
 * undo, no backslash that some servers read as a slash.
 */
import { RESOURCE_ID, WORKSPACE_ID } from '../../../shared/rules.ts';

/** The engine collections the proxy serves. */
export const ACCESS_COLLECTIONS = ['daiEngines', 'h2oEngines', 'notebookEngines'] as const;
export type AccessCollection = (typeof ACCESS_COLLECTIONS)[number];

/** An engine named by a request path. */
export interface EnginePath {
  workspace: string;
  collection: AccessCollection;
  engineId: string;
  /** The engine's resource name, e.g. `workspaces/w/notebookEngines/n1`. */
  name: string;
}

/**
 * What a request target is: a path under an engine's address (`engine`), one that looks like it
 * but may not be forwarded (`refused`, with the reason for a 400), or anything else (`other`:
 * not the proxy's, the API's routes answer it).
 */
export type PathVerdict =
  { kind: 'engine'; engine: EnginePath } | { kind: 'refused'; problem: string } | { kind: 'other' };

const WORKSPACE = new RegExp(WORKSPACE_ID);
const ENGINE_ID = new RegExp(RESOURCE_ID);
const COLLECTIONS: ReadonlySet<string> = new Set(ACCESS_COLLECTIONS);
/** Percent-escapes that decode to a slash, a backslash or a dot: they could move the path. */
const MOVING_ESCAPE = /%(2f|5c|2e)/i;
/** A percent sign that does not start a valid escape. */
const BAD_ESCAPE = /%(?![0-9a-f]{2})/i;
/** Control characters (NUL…) have no place in a path, encoded or not. */
const CONTROL = /[\u0000-\u001f\u007f]/; // eslint-disable-line no-control-regex

function isCollection(value: string | undefined): value is AccessCollection {
  return value !== undefined && COLLECTIONS.has(value);
}

/** Why a path segment after the engine's prefix may not be forwarded, if it may not. */
export function segmentProblem(segment: string): string | undefined {
  if (segment.includes('\\')) return 'the path holds a backslash';
  if (BAD_ESCAPE.test(segment)) return 'the path holds a malformed percent-encoding';
  if (MOVING_ESCAPE.test(segment)) return 'the path holds an encoded slash, backslash or dot';
  const decoded = decodeURIComponent(segment);
  if (CONTROL.test(decoded)) return 'the path holds a control character';
  if (decoded === '.' || decoded === '..') return 'the path holds a dot segment';
  // A second decoding (some servers do one) must not move the path either.
  if (MOVING_ESCAPE.test(decoded)) return 'the path holds a doubly encoded slash, backslash or dot';
  return undefined;
}

/** The verdict on `target`, the raw request target (path and query) as the client sent it. */
export function parseEnginePath(target: string): PathVerdict {
  if (!target.startsWith('/workspaces/')) return { kind: 'other' };
  const query = target.indexOf('?');
  const path = query < 0 ? target : target.slice(0, query);
  const segments = path.split('/');
  const [, , workspace = '', collection, engineId = '', ...rest] = segments;
  // `/workspaces/w/notebookEngines/` names no engine: the API's 404.
  if (!isCollection(collection) || engineId === '') return { kind: 'other' };
  const problem = namesProblem(workspace, engineId) ?? rest.map(segmentProblem).find((p) => p !== undefined);
  if (problem !== undefined) return { kind: 'refused', problem };
  return {
    kind: 'engine',
    engine: { workspace, collection, engineId, name: `workspaces/${workspace}/${collection}/${engineId}` },
  };
}

/**
 * Why the workspace or engine id may not be taken as named, if not. They are compared literally:
 * an escape there could name another engine than the one whose access is checked.
 */
function namesProblem(workspace: string, engineId: string): string | undefined {
  if (!WORKSPACE.test(workspace)) return `the workspace id "${workspace}" is not valid`;
  if (!ENGINE_ID.test(engineId)) return `the engine id "${engineId}" is not valid`;
  return undefined;
}
