/**
 * The unprivileged user H2O and notebook engines run as, whatever their image says: uid and gid
 * 1000, no capabilities, a read-only root, and a scratch `/tmp` of the pod's own. Volumes mounted
 * into the pod (a notebook's home) are made group-writable for gid 1000 by the kubelet
 * (`fsGroup`), so a fresh claim is usable without an init container running as root. A profile's
 * pod template may still override any of it (it is merged last, field by field).
 */
import type { Isolation } from './kind.ts';

/** The user and group engine processes run as. */
export const ENGINE_UID = 1000;
/** The engine's scratch space, writable although the root is not. */
export const TMP_MOUNT = '/tmp';

/** Non-root uid 1000 on a read-only root with no capabilities, and a writable `/tmp`. */
export function unprivilegedEngine(): Isolation {
  return {
    securityContext: {
      runAsNonRoot: true,
      runAsUser: ENGINE_UID,
      runAsGroup: ENGINE_UID,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    // OnRootMismatch: a home volume already owned by the group is not walked again at every start.
    podSecurityContext: { fsGroup: ENGINE_UID, fsGroupChangePolicy: 'OnRootMismatch' },
    volumes: [{ name: 'tmp', emptyDir: {} }],
    volumeMounts: [{ name: 'tmp', mountPath: TMP_MOUNT }],
  };
}
