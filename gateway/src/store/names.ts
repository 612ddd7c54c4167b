/**
 * Kubernetes object names of stored resources. A resource is identified by its workspace and id
 * (kept exactly in the object's labels, which every read checks); the object name only has to be
 * unique, and it must never be shared by two identities: otherwise a call on one resource could
 * reach another, in another workspace, under another permission.
 */
import { createHash } from 'node:crypto';
import { WORKSPACE_ID } from '../../../shared/rules.ts';

const WORKSPACE = new RegExp(WORKSPACE_ID);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 253;
/** Marks an id kept as the hexadecimal of its UTF-8 bytes; no id kept as it is starts so. */
const ENCODED = '0x';

/**
 * The object name of a resource, or `undefined` when no object can hold it (an invalid
 * workspace, an id that is not well-formed Unicode, or too long a name): such a resource cannot
 * exist. `<workspace>.<id>` when the id is a valid name part not starting with `0x`, otherwise
 * `<workspace>.0x<hex of the id's UTF-8>`. The workspace holds no dot, so the first dot splits
 * the name, and the two forms of the id part cannot meet: the mapping is injective, and
 * {@link parseObjectName} is its inverse.
 */
export function objectName(workspace: string, id: string): string | undefined {
  if (!WORKSPACE.test(workspace) || id === '' || !id.isWellFormed()) return undefined;
  const plain = `${workspace}.${id}`;
  const name =
    DNS_SUBDOMAIN.test(plain) && !id.startsWith(ENCODED)
      ? plain
      : `${workspace}.${ENCODED}${Buffer.from(id, 'utf8').toString('hex')}`;
  return name.length <= MAX_NAME ? name : undefined;
}

/** The workspace and id an object name of {@link objectName} was made from. */
export function parseObjectName(name: string): { workspace: string; id: string } | undefined {
  const dot = name.indexOf('.');
  if (dot < 0) return undefined;
  const workspace = name.slice(0, dot);
  const rest = name.slice(dot + 1);
  const id = rest.startsWith(ENCODED)
    ? Buffer.from(rest.slice(ENCODED.length), 'hex').toString('utf8')
    : rest;
  return objectName(workspace, id) === name ? { workspace, id } : undefined;
}

/**
 * Names that objects written by earlier releases may have for the same resource, besides the
 * current one. Release 1 hashed ids that were not valid name parts; objects keep their names
 * for life (a rename would replace the object, its uid and its engine's pods), so reads look
 * there too and check the labels.
 */
export function earlierObjectNames(workspace: string, id: string): string[] {
  const current = objectName(workspace, id);
  const release1 = release1Name(workspace, id);
  return release1 === current ? [] : [release1];
}

function release1Name(workspace: string, id: string): string {
  const plain = `${workspace}.${id}`;
  if (DNS_SUBDOMAIN.test(plain) && plain.length <= MAX_NAME) return plain;
  const hash = createHash('sha256').update(`${workspace}/${id}`).digest('hex').slice(0, 24);
  return `${workspace.toLowerCase().replace(/[^a-z0-9-]/g, '-')}.0${hash}`;
}
