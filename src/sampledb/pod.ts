// Pieces shared by the pod templates: Secret-sourced env, writable scratch volumes, resources of the helper Jobs.
import type {
  V1EnvVar,
  V1PodSpec,
  V1ResourceRequirements,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { PASSWORD_KEY, USERNAME_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security.ts';

export function literalEnv(values: Record<string, string>): V1EnvVar[] {
  return Object.entries(values).map(([name, value]) => ({ name, value }));
}

export function secretEnv(name: string, secretName: string, key: string): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: secretName, key } } };
}

/** PGUSER/PGPASSWORD of the superuser the image's entrypoint created from the superuser Secret. */
export function superuserEnv(instance: SampleDbInstance): V1EnvVar[] {
  const secret = instance.names.superuserSecret;
  return [secretEnv('PGUSER', secret, USERNAME_KEY), secretEnv('PGPASSWORD', secret, PASSWORD_KEY)];
}

/** With a read-only root filesystem, the few places programs write to are emptyDirs. */
export function scratchVolume(name: string, sizeLimit = '64Mi'): V1Volume {
  return { name, emptyDir: { sizeLimit } };
}

export const TMP_VOLUME = 'tmp';
export const TMP_MOUNT: V1VolumeMount = { name: TMP_VOLUME, mountPath: '/tmp' };

/** The data-path Jobs only run clients (psql, pg_dump, pg_restore): small and bounded. */
export const JOB_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { memory: '512Mi' },
};

/** One script-running container of a data-path Job: what differs between the init, backup and role Jobs. */
export interface ScriptJobContainer {
  name: string;
  /** The database's own image, so the clients (psql, pg_dump) match the server. */
  image: string;
  /** A POSIX sh script, run as `sh -c`. */
  script: string;
  env: V1EnvVar[];
  volumeMounts?: V1VolumeMount[];
  /** Where the script writes its result; the container's termination message (default /dev/termination-log). */
  terminationMessagePath?: string;
}

/**
 * The pod of a data-path Job: PodSecurity `restricted`, no service-account token, no service links, one script
 * container with bounded resources and /tmp as an emptyDir (the root filesystem is read-only). Never restarted in
 * place: the Job's backoffLimit decides retries.
 */
export function scriptJobPodSpec(container: ScriptJobContainer, volumes: V1Volume[] = []): V1PodSpec {
  return {
    restartPolicy: 'Never',
    securityContext: restrictedPodSecurityContext(),
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    containers: [
      {
        name: container.name,
        image: container.image,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', container.script],
        env: container.env,
        resources: JOB_RESOURCES,
        securityContext: restrictedContainerSecurityContext(),
        ...(container.terminationMessagePath
          ? { terminationMessagePath: container.terminationMessagePath }
          : {}),
        // A psql error is the last thing in the log: it becomes the termination message the status shows.
        terminationMessagePolicy: 'FallbackToLogsOnError',
        volumeMounts: [...(container.volumeMounts ?? []), TMP_MOUNT],
      },
    ],
    volumes: [...volumes, scratchVolume(TMP_VOLUME)],
  };
}
