// The major upgrade's Jobs (scripts/upgrade.ts) and its backup. The Jobs mount the data volume while the StatefulSet
// is at 0 replicas; preflight and upgrade get the old installation from an init container in the old image. Every
// Job carries where the upgrade started (major and image), so the plan can be rebuilt from the cluster alone.
import type { V1Job } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  KINDS,
  LABELS,
  type SampleDbBackupObject,
  TRIGGER_UPGRADE,
} from '../../api/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { childMeta } from '../meta.ts';
import { boundedName } from '../names.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv, TMP_MOUNT } from '../pod.ts';
import { DATA_MOUNT_PATH } from '../postgres-config.ts';
import {
  COPY_OLD_BINARIES_SCRIPT,
  OLD_INSTALL_ROOT,
  UPGRADE_SCRIPT,
  type UpgradeMode,
  upgradeScriptEnv,
} from '../scripts/upgrade.ts';
import { restrictedContainerSecurityContext } from '../security.ts';
import { preUpgradeBackupName } from './plan.ts';

export interface UpgradeRoute {
  fromMajor: number;
  toMajor: number;
  fromImage: string;
  toImage: string;
  /** Which attempt at this upgrade (status.upgrade.attempt); absent: 1. */
  attempt?: number;
}

/** Attempt 1 keeps the names of before attempts existed; attempt n > 1 has `-a<n>` after the major. */
export function upgradeJobName(
  sampleDbName: string,
  toMajor: number,
  mode: UpgradeMode,
  attempt = 1,
): string {
  return boundedName(sampleDbName, `upgrade-${toMajor}${attempt > 1 ? `-a${attempt}` : ''}-${mode}`);
}

const DEADLINES: Record<UpgradeMode, number> = {
  preflight: 1800,
  upgrade: 6 * 3600,
  rollback: 1800,
  cleanup: 1800,
};

export function upgradeJob(
  instance: SampleDbInstance,
  mode: UpgradeMode,
  route: UpgradeRoute,
  options: { cause?: string; nodeName?: string } = {},
): V1Job {
  const { cause, nodeName } = options;
  const needsOldBinaries = mode === 'preflight' || mode === 'upgrade';
  const oldMount = { name: 'old-install', mountPath: OLD_INSTALL_ROOT };
  const dataMount = { name: 'data', mountPath: DATA_MOUNT_PATH };
  const pod = scriptJobPodSpec(
    {
      name: `upgrade-${mode}`,
      image: route.toImage,
      script: UPGRADE_SCRIPT,
      env: [
        ...literalEnv(
          upgradeScriptEnv({
            mode,
            oldMajor: route.fromMajor,
            newMajor: route.toMajor,
            dataDirectory: DATA_MOUNT_PATH,
            newBinDir: `/usr/lib/postgresql/${route.toMajor}/bin`,
          }),
        ),
        // The install user's name; the scripts' servers trust their private socket, the password is not used.
        ...superuserEnv(instance).filter((e) => e.name === 'PGUSER'),
      ],
      volumeMounts: [dataMount, ...(needsOldBinaries ? [oldMount] : [])],
    },
    [
      { name: 'data', persistentVolumeClaim: { claimName: instance.names.dataPvc } },
      ...(needsOldBinaries ? [{ name: 'old-install', emptyDir: { sizeLimit: '1Gi' } }] : []),
    ],
  );
  // pg_upgrade runs two servers one after the other: more memory than a client Job.
  for (const container of pod.containers) {
    container.resources = { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } };
  }
  if (needsOldBinaries) {
    pod.initContainers = [
      {
        name: 'copy-old-binaries',
        image: route.fromImage,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', COPY_OLD_BINARIES_SCRIPT],
        env: literalEnv({
          SAMPLEDB_OLD_MAJOR: String(route.fromMajor),
          SAMPLEDB_OLD_ROOT: OLD_INSTALL_ROOT,
          SAMPLEDB_TERMINATION_LOG: '/dev/termination-log',
        }),
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
        securityContext: restrictedContainerSecurityContext(),
        terminationMessagePolicy: 'FallbackToLogsOnError',
        volumeMounts: [oldMount, TMP_MOUNT],
      },
    ];
  }
  // The cleanup runs next to the new server, which has the volume attached: on its node, or it could not mount it.
  if (nodeName) pod.nodeName = nodeName;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(
      instance,
      upgradeJobName(instance.name, route.toMajor, mode, route.attempt),
      'upgrade',
      {
        annotations: {
          [ANNOTATIONS.fromMajor]: String(route.fromMajor),
          [ANNOTATIONS.fromImage]: route.fromImage,
          ...(cause ? { [ANNOTATIONS.cause]: cause.slice(0, 2048) } : {}),
        },
      },
    ),
    spec: {
      // A retry after a killed pod resumes (the scripts are idempotent); a real failure fails the same way again.
      backoffLimit: mode === 'preflight' ? 0 : 2,
      // The retry only once the killed pod is gone for good (not merely terminating): two pods must never work on
      // the data files at once.
      podReplacementPolicy: 'Failed',
      activeDeadlineSeconds: DEADLINES[mode],
      template: { metadata: { labels: { ...instance.labels.upgrade } }, spec: pod },
    },
  };
}

/** The backup taken before a major upgrade. Not owned by the SampleDB: it is the way back, it must outlive it. */
export function preUpgradeBackup(instance: SampleDbInstance, route: UpgradeRoute): SampleDbBackupObject {
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDbBackup,
    metadata: {
      name: preUpgradeBackupName(instance.name, route.toMajor, route.attempt),
      namespace: instance.namespace,
      labels: { ...instance.labels.backup, [LABELS.trigger]: TRIGGER_UPGRADE },
      annotations: {
        [ANNOTATIONS.fromMajor]: String(route.fromMajor),
        [ANNOTATIONS.fromImage]: route.fromImage,
      },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}
