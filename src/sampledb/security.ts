// PodSecurity "restricted" settings shared by the database pod and the Jobs.
import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';

/** uid/gid of the `postgres` user in the official Debian-based postgres images (the Alpine ones use 70). */
export const POSTGRES_UID = 999;

export function restrictedPodSecurityContext(): V1PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: POSTGRES_UID,
    runAsGroup: POSTGRES_UID,
    fsGroup: POSTGRES_UID,
    // A large data volume would otherwise be chowned recursively on every start.
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

export function restrictedContainerSecurityContext(): V1SecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: POSTGRES_UID,
    runAsGroup: POSTGRES_UID,
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
