/**
 * The workspace an engine's object name belongs to, for serving workspaces fairly: the API names
 * engines `<workspace>.<id>` (gateway/src/store/names.ts), and a workspace holds no dot. An
 * object written without the API and without a dot is a group of its own.
 */
export function workspaceOfObjectName(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? name : name.slice(0, dot);
}
