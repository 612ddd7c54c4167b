/**
 * Resource names of the API (AIP-122): `workspaces/{workspace}/{collection}/{id}`, and names
 * nested under them (`…/sandboxEngines/{id}/processes/{id}`). One place takes names apart, so
 * that every part of the product reads a name the same way. Pure.
 */

/** The parts of a top-level resource name. */
export interface ResourceName {
  workspace: string;
  collection: string;
  id: string;
}

/** `workspaces/{workspace}/{collection}/{id}` of its parts. */
export function formatResourceName(name: ResourceName): string {
  return `workspaces/${name.workspace}/${name.collection}/${name.id}`;
}

/**
 * The parts of a top-level resource name, when it is one (of `collection`, when given): four
 * segments, the first `workspaces`, none empty.
 */
export function parseResourceName(name: string, collection?: string): ResourceName | undefined {
  const parts = name.split('/');
  if (parts.length !== 4 || parts[0] !== 'workspaces' || parts.includes('')) return undefined;
  const [, workspace = '', found = '', id = ''] = parts;
  return collection === undefined || found === collection ? { workspace, collection: found, id } : undefined;
}

/** The last segment of a name: a resource's id (`e1` of `workspaces/w/daiEngines/e1`). */
export function idOf(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** The workspace a name lies in (`w` of `workspaces/w/…`); '' when it names none. */
export function workspaceOf(name: string): string {
  const [first, workspace = ''] = name.split('/');
  return first === 'workspaces' ? workspace : '';
}

/** The parent of a name: the name without its last collection and id (`workspaces/w` of `workspaces/w/daiEngines/e1`). */
export function parentOf(name: string): string {
  return name.split('/').slice(0, -2).join('/');
}
