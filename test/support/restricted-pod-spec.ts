// Pod Security Standards "restricted" (which includes "baseline") for a V1PodSpec, the builders' model type,
// plus this project's own rule: a read-only root filesystem. Stricter sibling of pod-security.ts (sysctls,
// procMount, SELinux, AppArmor, ephemeral containers), which takes a structural type V1PodSpec does not fit.
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';

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

const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/** Every rule of the restricted profile the pod spec breaks; empty when it complies. */
export function restrictedPodSpecViolations(
  pod: V1PodSpec,
  options: { readOnlyRootFilesystem?: boolean } = {},
): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push('host namespaces must not be shared');
  for (const volume of pod.volumes ?? []) {
    const types = Object.keys(volume).filter((key) => key !== 'name');
    for (const type of types) {
      if (!ALLOWED_VOLUME_TYPES.has(type))
        problems.push(`volume ${volume.name}: type ${type} is not allowed`);
    }
  }
  for (const sysctl of podContext.sysctls ?? []) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) problems.push(`sysctl ${sysctl.name} is not allowed`);
  }
  if (podContext.runAsUser === 0) problems.push('pod runAsUser must not be 0');
  if (podContext.seLinuxOptions?.user || podContext.seLinuxOptions?.role)
    problems.push('pod seLinuxOptions user/role set');
  if (podContext.seccompProfile?.type === 'Unconfined')
    problems.push('pod seccompProfile must not be Unconfined');
  if (podContext.appArmorProfile?.type === 'Unconfined')
    problems.push('pod appArmorProfile must not be Unconfined');

  const containers: V1Container[] = [
    ...(pod.initContainers ?? []),
    ...(pod.containers ?? []),
    ...((pod.ephemeralContainers ?? []) as V1Container[]),
  ];
  if (containers.length === 0) problems.push('pod has no containers');
  for (const container of containers) {
    const c = container.securityContext ?? {};
    const where = `container ${container.name}`;
    if (c.privileged) problems.push(`${where}: privileged`);
    if (c.allowPrivilegeEscalation !== false)
      problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if (!(c.runAsNonRoot ?? podContext.runAsNonRoot)) problems.push(`${where}: runAsNonRoot must be true`);
    if (c.runAsUser === 0) problems.push(`${where}: runAsUser must not be 0`);
    const seccomp = c.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') {
      problems.push(`${where}: seccompProfile must be RuntimeDefault or Localhost`);
    }
    if (!c.capabilities?.drop?.includes('ALL')) problems.push(`${where}: capabilities must drop ALL`);
    for (const added of c.capabilities?.add ?? []) {
      if (added !== 'NET_BIND_SERVICE') problems.push(`${where}: capability ${added} may not be added`);
    }
    if (c.procMount && c.procMount !== 'Default') problems.push(`${where}: procMount must be Default`);
    if (c.seLinuxOptions?.user || c.seLinuxOptions?.role)
      problems.push(`${where}: seLinuxOptions user/role set`);
    if (c.appArmorProfile?.type === 'Unconfined')
      problems.push(`${where}: appArmorProfile must not be Unconfined`);
    for (const port of container.ports ?? []) {
      if (port.hostPort) problems.push(`${where}: hostPort ${port.hostPort} is not allowed`);
    }
    if ((options.readOnlyRootFilesystem ?? true) && c.readOnlyRootFilesystem !== true) {
      problems.push(`${where}: readOnlyRootFilesystem must be true`);
    }
  }
  return problems;
}
