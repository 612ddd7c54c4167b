/**
 * Why a strategic merge patch could not be applied. The operator reports the message on the
 * engine, where a profile administrator reads it, so it names the place in the document and the
 * rule that was broken.
 */
export class StrategicMergeError extends Error {
  override readonly name = 'StrategicMergeError';
  /** Where in the document, for example `spec.containers[name="main"].env`; "" for the top. */
  readonly path: string;
  readonly reason: string;

  constructor(path: string, reason: string) {
    super(path === '' ? reason : `${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** The path of a map's field, for error messages. */
export function childPath(path: string, key: string): string {
  const name = /^[A-Za-z_$][\w$/-]*$/.test(key) ? key : JSON.stringify(key);
  return path === '' ? name : `${path}.${name}`;
}

/** The path of a list element: by its merge key when it has one, else by its position. */
export function elementPath(
  path: string,
  element: { key?: string; value?: unknown; index?: number },
): string {
  if (element.key !== undefined && element.value !== undefined) {
    return `${path}[${element.key}=${JSON.stringify(element.value)}]`;
  }
  return `${path}[${element.index ?? 0}]`;
}
