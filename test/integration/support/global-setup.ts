// Loaded by `npm run test:integration` (--test-global-setup): one control plane, with workloads, shared by
// every integration test file. Test files reach it through ./cluster.ts.
import { ControlPlane } from '../../../src/envtest/index.ts';
import { sharedBinDirVariable, sharedKubeconfigVariable } from './cluster.ts';

let plane: ControlPlane | undefined;

export async function globalSetup(): Promise<void> {
  const started = performance.now();
  plane = await ControlPlane.start({ workloads: true });
  process.env[sharedKubeconfigVariable] = plane.kubeconfigPath;
  process.env[sharedBinDirVariable] = plane.binDir;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`integration: shared control plane ready in ${seconds}s at ${plane.server}\n`);
}

export async function globalTeardown(): Promise<void> {
  await plane?.stop();
}
