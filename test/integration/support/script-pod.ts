// Runs the script of a Job pod the operator created, the way its container would: the command from the pod spec,
// env resolved like the kubelet does (literal values and secretKeyRefs read from the API), volumes mapped to local
// directories (a PVC is one directory per claim, shared by every pod that mounts it), against a real PostgreSQL
// server. Returns the exit code and the termination message the kubelet would report.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import {
  CONFIG_MAPS as CONFIGMAPS,
  type KubeHttp,
  type KubeObject,
  SECRETS,
} from '../../../src/runtime/index.ts';
import { type PostgresServer, runScript } from '../../support/postgres.ts';

export interface ScriptPodResult {
  code: number | null;
  message: string;
  stdout: string;
  stderr: string;
}

/** Where the claim's "volume" lives locally. */
export function claimDirectory(volumesDir: string, claimName: string): string {
  return join(volumesDir, claimName);
}

export async function runScriptPod(
  pod: V1Pod & KubeObject,
  http: KubeHttp,
  pg: PostgresServer,
  volumesDir: string,
): Promise<ScriptPodResult> {
  const namespace = pod.metadata.namespace ?? '';
  const container = pod.spec?.containers?.[0];
  const script = container?.command?.[2];
  if (!container || !script) throw new Error(`pod ${pod.metadata.name} has no sh -c script`);
  const scratch = mkdtempSync(join(pg.scratchDir, 'pod-'));

  const mounts: Array<[string, string]> = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find((v) => v.name === mount.name);
    let local = join(scratch, mount.name);
    if (volume?.persistentVolumeClaim)
      local = claimDirectory(volumesDir, volume.persistentVolumeClaim.claimName);
    mkdirSync(local, { recursive: true, mode: 0o777 });
    if (volume?.configMap) {
      const cm = await http.get<V1ConfigMap & KubeObject>(CONFIGMAPS, {
        namespace,
        name: volume.configMap.name ?? '',
      });
      for (const item of volume.configMap.items ?? [])
        writeFileSync(join(local, item.path), cm.data?.[item.key] ?? '');
    }
    mounts.push([mount.mountPath ?? '', local]);
  }
  const localPath = (value: string) => {
    const hit = mounts.find(([mountPath]) => value === mountPath || value.startsWith(`${mountPath}/`));
    return hit ? `${hit[1]}${value.slice(hit[0].length)}` : value;
  };

  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    // The API drops empty values (omitempty); the kubelet still sets the variable, to "".
    if (!variable.valueFrom) env[variable.name] = localPath(variable.value ?? '');
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = await http.get<V1Secret & KubeObject>(SECRETS, { namespace, name: ref.name ?? '' });
      env[variable.name] = Buffer.from(secret.data?.[ref.key ?? ''] ?? '', 'base64').toString('utf8');
    }
  }
  const terminationLog = join(scratch, 'termination-log');
  writeFileSync(terminationLog, '');
  Object.assign(env, {
    // The server is the test's real PostgreSQL, reached as its superuser (the pod would use the one the image's
    // entrypoint created from the same Secret).
    ...pg.clientEnv(),
    SAMPLEDB_TERMINATION_LOG: terminationLog,
    HOME: scratch,
  });
  const run = await runScript(script, env);
  let message = readFileSync(terminationLog, 'utf8').trim();
  if (!message && run.code !== 0 && container.terminationMessagePolicy === 'FallbackToLogsOnError') {
    message = `${run.stdout}${run.stderr}`.trim().split('\n').slice(-80).join('\n').slice(-2048);
  }
  return { code: run.code, message, stdout: run.stdout, stderr: run.stderr };
}
