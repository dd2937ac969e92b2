// `npm run dev`: the local control plane (controllers, scheduler, kwok), the CRDs, RBAC, admission policy and example
// SampleDBs from dist/, and the operator (`node src/main.ts`) as a child process, in the foreground. Ctrl-C stops the
// operator (SIGTERM, graceful) and then the control plane.
//   --node real            a real node instead of kwok: the examples run real PostgreSQL (images built on the machine)
//   --wait-for-node <s>    wait up to <s> seconds for another real node on this machine to stop
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { nodeArguments } from '../src/envtest/arguments.ts';
import { ControlPlane } from '../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../src/envtest/real-node/images.ts';
import { crdManifests, distManifests, type Manifest } from '../test/integration/support/manifests.ts';

const stateDir = resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb');
const { node, lockWaitMs } = nodeArguments(process.argv.slice(2));
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
  process.stderr.write(
    node === 'real' ? 'Starting the control plane and a real node...\n' : 'Starting the control plane...\n',
  );
  plane = await ControlPlane.start({
    workloads: true,
    node,
    // The operator runs here as a process, from the sources: only the PostgreSQL images are needed on the node.
    realNode: { lockWaitMs, images: ['postgres-15', 'postgres-17'] },
    log: (line) => logFile.write(`${line}\n`),
  });
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
      ...(node === 'real' ? { POSTGRES_IMAGE_REPOSITORY: LOCAL_POSTGRES_REPOSITORY } : {}),
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
      ...(node === 'real'
        ? [
            'Connect (see README "Connect to a database"), e.g.:',
            '  kubectl -n sampledb-examples port-forward svc/minimal 5432:5432 &',
            "  PGPASSWORD=$(kubectl -n sampledb-examples get secret minimal-binding -o jsonpath='{.data.password}' | base64 -d) \\",
            '    psql -h 127.0.0.1 -U app app',
          ]
        : []),
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n(logs: ${logPath})\n`);
  await shutdown('error');
}
