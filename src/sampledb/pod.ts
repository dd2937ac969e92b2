// Pieces shared by the pod templates: Secret-sourced env, writable scratch volumes, resources of the helper Jobs.
import type { V1EnvVar, V1ResourceRequirements, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { PASSWORD_KEY, USERNAME_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';

export function literalEnv(values: Record<string, string>): V1EnvVar[] {
  return Object.entries(values).map(([name, value]) => ({ name, value }));
}

export function secretEnv(name: string, secretName: string, key: string): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: secretName, key } } };
}

/** PGUSER/PGPASSWORD of the superuser the image's entrypoint created from the credentials Secret. */
export function superuserEnv(instance: SampleDbInstance): V1EnvVar[] {
  const secret = instance.credentials.secretName;
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
