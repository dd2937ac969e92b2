// `npm run dev`: the local control plane (controllers, scheduler, kwok), the CRDs, RBAC, admission policy and example
// SampleDBs from dist/, and the operator (`node src/main.ts`) as a child process, in the foreground. Ctrl-C stops the
// operator (SIGTERM, graceful) and then the control plane.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ControlPlane } from '../src/envtest/index.ts';
import { crdManifests, distManifests, type Manifest } from '../test/integration/support/manifests.ts';

const stateDir = resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb');
await mkdir(stateDir, { recursive: true });
const logPath = join(stateDir, 'control-plane.log');
const logFile = createWriteStream(logPath, { flags: 'w' });

let plane: ControlPlane | undefined;
let operator: ChildProcess | undefined;
let stopping = false;
const shutdown = async (signal: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`\n${signal}: stopping the operator and the control plane...\n`);
  if (operator && operator.exitCode === null) {
    operator.kill('SIGTERM');
    await new Promise((done) => operator?.once('exit', done));
  }
  await plane?.stop();
  logFile.end();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

async function apply(manifests: readonly Manifest[], what: string): Promise<void> {
  const result = await plane!.kubectl(['apply', '--server-side', '-f', '-'], {
    input: manifests.map((m) => JSON.stringify(m)).join('\n'),
  });
  if (result.code !== 0) throw new Error(`applying ${what}: ${result.stderr}`);
}

try {
  process.stderr.write('Starting the control plane...\n');
  plane = await ControlPlane.start({ workloads: true, log: (line) => logFile.write(`${line}\n`) });
  const kubeconfig = join(stateDir, 'kubeconfig');
  await copyFile(plane.kubeconfigPath, kubeconfig);
  await apply(crdManifests(), 'the CRDs');
  await plane.kubectl([
    'wait',
    '--for=condition=Established',
    'crd/sampledbs.sampledb.io',
    'crd/sampledbbackups.sampledb.io',
  ]);
  // RBAC and the deletion-protection policy; the operator itself runs here as a process, not as the Deployment.
  await apply(
    distManifests('0001-sampledb-operator.k8s.yaml').filter(
      (m) => !['Deployment', 'PodDisruptionBudget', 'Service'].includes(m.kind),
    ),
    'the operator manifests',
  );
  operator = spawn(process.execPath, [resolve('src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      HEALTH_PORT: '0',
      METRICS_PORT: '0',
      LEADER_ELECTION: 'false',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  operator.once('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`operator exited (${code ?? signal}); stopping\n`);
      void shutdown('operator exit');
    }
  });
  await apply(distManifests('0002-sampledb-examples.k8s.yaml'), 'the examples');
  process.stderr.write(
    [
      '',
      `Control plane at ${plane.server}; operator pid ${operator.pid}; logs of the control plane: ${logPath}`,
      'In another shell:',
      `  export KUBECONFIG=${kubeconfig} PATH=${plane.binDir}:$PATH`,
      '  kubectl get sdb -A -w',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n(logs: ${logPath})\n`);
  await shutdown('error');
}
