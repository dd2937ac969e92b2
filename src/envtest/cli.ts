// `npm run cluster`: a local control plane with controllers and a node, in the foreground.
//   --node kwok (default)   kwok's fake node: pods are Ready without running anything
//   --node real             a real node on this machine (root; see docs/testing.md)
//   --wait-for-node <s>     with --node real: wait up to <s> seconds for another real node on this machine to stop
//   --verbose, -v           print the processes' output too
// Composition root: the only envtest file that reads argv/env or writes to the console.
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { nodeArguments } from './arguments.ts';
import { ControlPlane } from './control-plane.ts';

const stateDir = resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb');
const verbose = process.argv.includes('--verbose') || process.argv.includes('-v');
let node: 'kwok' | 'real';
let lockWaitMs: number;
try {
  ({ node, lockWaitMs } = nodeArguments(process.argv.slice(2)));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

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
process.stderr.write(
  node === 'real'
    ? 'Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a real node (containerd, kubelet, kube-proxy, CoreDNS)...\n'
    : 'Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok...\n',
);
try {
  plane = await ControlPlane.start({ workloads: true, node, realNode: { lockWaitMs }, log });
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
    plane.node
      ? `Control plane ready in ${seconds}s at ${plane.server} (real node: ${plane.node.name}, StorageClass: standard, images: ${plane.node.images.map((i) => i.refs[0]).join(', ')}).`
      : `Control plane ready in ${seconds}s at ${plane.server} (fake node: kwok-node-0, StorageClass: standard).`,
    `Binaries: ${plane.binDir}`,
    `Logs: ${logPath}`,
    'Press Ctrl-C to stop. In another shell:',
    '',
  ].join('\n'),
);
process.stdout.write(`export KUBECONFIG=${kubeconfig}\n`);
