// Loaded by `npm run test:e2e` (--test-global-setup): one real node with the operator from dist/, shared by every
// e2e test file in turn (each works in its own namespace). Test files reach it through ./cluster.ts.
import type { ControlPlane } from '../../../src/envtest/index.ts';
import { exportCluster, startE2eCluster } from './cluster.ts';

let plane: ControlPlane | undefined;

export async function globalSetup(): Promise<void> {
  const started = performance.now();
  const result = await startE2eCluster();
  plane = result.plane;
  exportCluster(result.cluster, plane.auditLogPath);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `e2e: real node with the operator from dist/ ready in ${seconds}s at ${plane.server}\n`,
  );
}

export async function globalTeardown(): Promise<void> {
  await plane?.stop();
}
