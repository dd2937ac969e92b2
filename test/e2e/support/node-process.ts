// A real node in a process of its own, for the test that SIGKILLs it (test/e2e/standalone/machine-state.test.ts):
// prints "ready <pid>" once the node is Ready, then waits to be killed.
import { ControlPlane } from '../../../src/envtest/index.ts';

await ControlPlane.start({ node: 'real', realNode: { images: [] } });
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 60_000);
