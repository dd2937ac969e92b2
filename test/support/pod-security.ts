// Checks a pod spec against the PodSecurity "restricted" profile (https://kubernetes.io/docs/concepts/security/pod-security-standards/).
// The real apiserver enforces it in the integration tests; this twin lets unit tests name the exact rule broken.

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type?: string };
}

interface Container {
  name: string;
  securityContext?: SecurityContext;
  ports?: Array<{ hostPort?: number }>;
}

export interface PodSpecLike {
  securityContext?: SecurityContext & { sysctls?: unknown[] };
  containers: Container[];
  initContainers?: Container[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: Array<Record<string, unknown>>;
}

const ALLOWED_VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

/** Every way the pod spec breaks the restricted profile; empty when it complies. */
export function restrictedViolations(pod: PodSpecLike): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push('host namespaces are not allowed');
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== 'name');
    if (type && !ALLOWED_VOLUME_TYPES.has(type)) problems.push(`volume ${String(volume.name)}: ${type} is not allowed`);
  }
  if (podContext.runAsUser === 0) problems.push('pod runAsUser must not be 0');
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    const context = container.securityContext ?? {};
    const where = `container ${container.name}`;
    if (context.privileged) problems.push(`${where}: privileged`);
    if (context.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if (!(context.runAsNonRoot ?? podContext.runAsNonRoot)) problems.push(`${where}: runAsNonRoot must be true`);
    if ((context.runAsUser ?? podContext.runAsUser) === 0) problems.push(`${where}: runAsUser must not be 0`);
    const seccomp = context.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') {
      problems.push(`${where}: seccompProfile must be RuntimeDefault or Localhost`);
    }
    if (!context.capabilities?.drop?.includes('ALL')) problems.push(`${where}: capabilities must drop ALL`);
    for (const added of context.capabilities?.add ?? []) {
      if (added !== 'NET_BIND_SERVICE') problems.push(`${where}: capability ${added} may not be added`);
    }
    if (container.ports?.some((port) => port.hostPort)) problems.push(`${where}: hostPort is not allowed`);
  }
  return problems;
}
