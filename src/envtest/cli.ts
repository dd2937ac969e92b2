// `npm run cluster`: a local control plane with controllers, kwok and a fake node, in the foreground.
// Composition root: the only envtest file that reads argv/env or writes to the console.
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ControlPlane } from './control-plane.ts';

const stateDir = resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb');
const verbose = process.argv.includes('--verbose') || process.argv.includes('-v');

await mkdir(stateDir, { recursive: true });
const logPath = resolve(stateDir, 'control-plane.log');
const logFile = createWriteStream(logPath, { flags: 'w' });
const log = (line: string): void => {
  logFile.write(`${line}\n`);
  if (verbose) process.stderr.write(`${line}\n`);
};

let plane: ControlPlane | undefined;
let stopping = false;
const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`\n${signal}: stopping the control plane...\n`);
  await plane?.stop();
  logFile.end();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const started = performance.now();
process.stderr.write('Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok...\n');
try {
  plane = await ControlPlane.start({ workloads: true, log });
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n(logs: ${logPath})\n`);
  process.exit(1);
}
if (stopping) {
  await plane.stop();
  process.exit(0);
}
const kubeconfig = resolve(stateDir, 'kubeconfig');
await copyFile(plane.kubeconfigPath, kubeconfig);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stderr.write(
  [
    `Control plane ready in ${seconds}s at ${plane.server} (fake node: kwok-node-0, StorageClass: standard).`,
    `Binaries: ${plane.binDir}`,
    `Logs: ${logPath}`,
    'Press Ctrl-C to stop. In another shell:',
    '',
  ].join('\n'),
);
process.stdout.write(`export KUBECONFIG=${kubeconfig}\n`);
