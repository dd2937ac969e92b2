// The real node leaves the machine as it found it: after stop(), and after its process is SIGKILLed (the watchdog
// runs the teardown script). While it runs, a second real node on this machine is refused, naming the holder.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import { command, readSysctl } from '../../../src/envtest/real-node/host.ts';
import { LOCK_FILE, RealNodeBusyError } from '../../../src/envtest/real-node/lock.ts';
import { BRIDGE } from '../../../src/envtest/real-node/network.ts';
import { FIXED_PATHS, WATCHED_SYSCTLS } from '../../../src/envtest/real-node/node.ts';
import { lockWaitMs } from '../support/cluster.ts';

/** What the node may change, normalised (no counters or timestamps). */
async function machineState(): Promise<Record<string, unknown>> {
  const rules = async (tool: string) =>
    (await command(tool, []).catch(() => ({ stdout: '' }))).stdout
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.replace(/\[\d+:\d+\]/, ''));
  const sysctls = Object.fromEntries(
    await Promise.all(WATCHED_SYSCTLS.map(async (key) => [key, await readSysctl(key)] as const)),
  );
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((m) => m.startsWith('/tmp/envtest-node-') || m.startsWith('/run/netns/'));
  const cgroupTrees = (
    await command('sh', ['-c', 'find /sys/fs/cgroup -maxdepth 6 -type d -name sampledb-node'])
  ).stdout;
  return {
    sysctls,
    iptables: await rules('iptables-save'),
    ip6tables: await rules('ip6tables-save'),
    links: (await command('ip', ['-o', 'link', 'show'])).stdout
      .split('\n')
      .map((line) => line.split(':')[1]?.trim())
      .filter(Boolean),
    mounts,
    loops: (await command('losetup', ['-a'])).stdout.split('\n').filter((l) => l.includes('envtest-node')),
    cgroupTrees,
    paths: FIXED_PATHS.filter((path) => existsSync(path)),
    lock: existsSync(LOCK_FILE),
  };
}

describe('the machine after a real node', { timeout: 10 * 60_000 }, () => {
  test('stop() restores it; meanwhile a second real node is refused with the holder named', async () => {
    const before = await machineState();
    const plane = await ControlPlane.start({
      node: 'real',
      realNode: { lockWaitMs: lockWaitMs(), images: [] },
    });
    try {
      const during = await machineState();
      assert.ok((during.links as string[]).includes(BRIDGE), 'the bridge is up');
      assert.equal(during.lock, true);
      await assert.rejects(ControlPlane.start({ node: 'real' }), (error: unknown) => {
        assert.ok(error instanceof RealNodeBusyError, String(error));
        assert.equal(error.holder.pid, process.pid);
        assert.match(error.message, new RegExp(`pid ${process.pid}, .* in ${process.cwd()}`));
        return true;
      });
    } finally {
      await plane.stop();
    }
    assert.deepEqual(await machineState(), before);
  });

  test('the watchdog restores it when the node process is SIGKILLed', async () => {
    const before = await machineState();
    const child = spawn(process.execPath, [join(import.meta.dirname, '../support/node-process.ts')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await pollUntil('the node process is ready', async () => (output.includes('ready ') ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 200,
      failFast: () => (child.exitCode !== null ? `exited: ${output.slice(-3000)}` : undefined),
    });
    assert.ok(((await machineState()).links as string[]).includes(BRIDGE));
    child.kill('SIGKILL');
    await pollUntil(
      'the machine is restored',
      async () => {
        const now = await machineState();
        return JSON.stringify(now) === JSON.stringify(before) ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    ).catch(async (error: unknown) => {
      assert.deepEqual(await machineState(), before, String(error));
    });
  });
});
