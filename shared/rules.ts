/**
 * Field rules of spec sections 5 and 9 that both the gateway's validation and the CRD schemas
 * enforce, so that objects written with kubectl obey the same limits as API calls.
 */

/** Resource ids (profiles, engines, notebook images) and version aliases: 1-63 characters. */
export const RESOURCE_ID = '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$';
/**
 * Workspace ids: a DNS label (RFC 1123) — 1-63 lowercase letters, digits and hyphens, starting
 * and ending with a letter or digit. Platform workspace ids (`default`, `global`, UUIDs) fit; a
 * dot never does, so the first dot of a stored object's name always ends its workspace.
 */
export const WORKSPACE_ID = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';
/** Annotation keys: at most 63 characters. */
export const ANNOTATION_KEY = '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
/**
 * Version ids: semantic versions with any number of numeric segments and an optional
 * pre-release, e.g. 1.10.6, 1.10.6.1, 1.10.6-alpha, 3.46.0.1-rc.2.
 */
export const VERSION_ID = '^[0-9]+(\\.[0-9]+)+(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$';
/**
 * Process ids in a sandbox engine: like a workspace id, a digit may come first (a generated UUID
 * fits).
 */
export const PROCESS_ID = WORKSPACE_ID;
/** Port ids: the port number in decimal, 1024-65535. */
export const PORT_ID =
  '^(102[4-9]|10[3-9][0-9]|1[1-9][0-9]{2}|[2-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$';
/** Longest id, alias, annotation key and display name. */
export const MAX_LENGTH = 63;

/** Extra OpenAPI schema for fields of these proto names, in every resource that has them. */
export const FIELD_SCHEMAS: Readonly<Record<string, Record<string, unknown>>> = {
  display_name: { maxLength: MAX_LENGTH },
  aliases: {
    items: { type: 'string', pattern: RESOURCE_ID, maxLength: MAX_LENGTH },
    'x-kubernetes-list-type': 'set',
  },
  annotations: {
    'x-kubernetes-validations': [
      {
        rule: `self.all(k, k.size() <= ${MAX_LENGTH} && k.matches('${ANNOTATION_KEY}'))`,
        message:
          'annotation keys are at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit',
      },
    ],
  },
};
