/**
 * Where a resource's output fields live. The status subresource drops the status sent with a
 * new object, so a create that also wrote status took two writes. The API instead records the
 * output fields it sets on a create (creator, snapshots of the profile and version, the first
 * state) in an annotation written with the object, and every later status write (the API's
 * updates, the operator's reports) goes to status as before. A field reads from status when
 * status has it, else from the annotation.
 *
 * Objects written before the annotation existed keep everything in status, and read the same.
 * A change that clears a field removes it from the annotation with the same write, so a value
 * recorded at creation never comes back.
 */
import { GROUP } from './resources.ts';

export const RECORDED_ANNOTATION = `${GROUP}/recorded`;

/**
 * Past this size the fields go to status in a second write: annotations share 256 KiB per
 * object, and a profile snapshot may hold large pod templates.
 */
export const MAX_RECORDED_BYTES = 128 * 1024;

export type Fields = { [key: string]: unknown };

interface Annotated {
  metadata: { annotations?: Record<string, string> };
  status?: Fields;
}

/** The fields recorded in the annotation; none when it is absent or not a JSON object. */
export function recordedFields(annotations: Readonly<Record<string, string>> | undefined): Fields {
  const text = annotations?.[RECORDED_ANNOTATION];
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Fields) : {};
  } catch {
    // Damaged by hand: status alone still reads, and the operator reports what it sees.
    return {};
  }
}

/** The resource's output fields: status over what was recorded at creation. */
export function outputFields(resource: Annotated): Fields {
  const recorded = recordedFields(resource.metadata.annotations);
  return Object.keys(recorded).length === 0 ? (resource.status ?? {}) : { ...recorded, ...resource.status };
}

/** The annotation text recording `fields`, or undefined when they are too large for one. */
export function recordText(fields: Fields): string | undefined {
  const text = JSON.stringify(fields);
  return Buffer.byteLength(text) <= MAX_RECORDED_BYTES ? text : undefined;
}

/**
 * The recorded annotation after a status write of `written`: without the fields it clears (null
 * or, when `clearsAbsent`, left out), so that they read as cleared. Undefined when nothing is
 * left; the same text when nothing changes.
 */
export function recordAfterWrite(
  annotations: Readonly<Record<string, string>> | undefined,
  written: Fields,
  clearsAbsent: boolean,
): string | undefined {
  const text = annotations?.[RECORDED_ANNOTATION];
  if (text === undefined) return undefined;
  const recorded = recordedFields(annotations);
  const cleared = (key: string): boolean => (key in written ? written[key] === null : clearsAbsent);
  const kept = Object.fromEntries(Object.entries(recorded).filter(([key]) => !cleared(key)));
  if (Object.keys(kept).length === Object.keys(recorded).length) return text;
  return Object.keys(kept).length === 0 ? undefined : JSON.stringify(kept);
}
