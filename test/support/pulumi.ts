// A Pulumi stack of this project driven through the Automation API with the program inline (no language host:
// docs/adr/0004-pulumi.md), on a local file backend, with the CLI and Kubernetes provider built from Go modules.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalWorkspace, PulumiCommand, type Stack } from '@pulumi/pulumi/automation/index.js';
import { stackProgram } from '../../src/deploy/program.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const SKIP_PULUMI_VARIABLE = 'SAMPLEDB_SKIP_PULUMI_E2E';

export const pulumiBinDir = (): string =>
  spawnSync('bash', [join(repoRoot, 'scripts/build-pulumi.sh'), '--print'], {
    encoding: 'utf8',
  }).stdout.trim();

/**
 * scripts/test.sh builds the Pulumi binaries in the background while the tiers before them run, and names a file
 * that receives the build's exit status in SAMPLEDB_PULUMI_BUILD_STATUS: wait for it (bounded) before looking.
 */
export async function awaitPulumiBuild(timeoutMs = 90 * 60_000): Promise<void> {
  const statusFile = process.env.SAMPLEDB_PULUMI_BUILD_STATUS;
  if (!statusFile) return;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(statusFile)) {
    if (Date.now() > deadline)
      throw new Error(`the Pulumi build did not finish within ${timeoutMs / 60_000} min`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const status = readFileSync(statusFile, 'utf8').trim();
  if (status !== '0')
    throw new Error(`scripts/build-pulumi.sh failed (exit ${status}); see its output above`);
}

/** The binaries the stack needs that scripts/build-pulumi.sh has not built. */
export function missingPulumiBinaries(binDir = pulumiBinDir()): string[] {
  return ['pulumi', 'pulumi-resource-kubernetes'].filter((b) => !existsSync(join(binDir, b)));
}

/** Creates (or selects) stack `stackName` in `work`, deploying to the cluster of `kubeconfig`, with `config` set. */
export async function localStack(options: {
  work: string;
  stackName: string;
  kubeconfig: string;
  config: Record<string, unknown>;
  binDir?: string;
}): Promise<Stack> {
  const binDir = options.binDir ?? pulumiBinDir();
  const pulumiCommand = await PulumiCommand.get({ root: dirname(binDir), skipVersionCheck: true });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: options.stackName, projectName: 'sampledb-operator', program: async () => stackProgram() },
    {
      workDir: options.work,
      pulumiHome: join(options.work, 'home'),
      pulumiCommand,
      projectSettings: {
        name: 'sampledb-operator',
        runtime: 'nodejs',
        backend: { url: `file://${options.work}` },
      },
      envVars: {
        PATH: `${binDir}:${process.env.PATH ?? ''}`,
        PULUMI_CONFIG_PASSPHRASE: 'e2e-only-passphrase',
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
        PULUMI_SKIP_UPDATE_CHECK: 'true',
        KUBECONFIG: options.kubeconfig,
      },
    },
  );
  for (const [key, value] of Object.entries(options.config)) {
    await stack.setConfig(key, { value: typeof value === 'string' ? value : JSON.stringify(value) });
  }
  return stack;
}
