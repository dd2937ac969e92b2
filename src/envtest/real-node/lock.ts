// One real node per machine: kubelet writes fixed paths (/var/lib/kubelet/device-plugins, /var/log/containers) and
// the bridge, the iptables rules and the sysctls are machine-wide. The lock is a file created exclusively; a holder
// that died without releasing it is recognised (its pid is gone or belongs to another process now) and its
// teardown script is run before the lock is taken over.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { processStartTime } from './host.ts';

export const STATE_DIR = '/run/sampledb-envtest';
export const LOCK_FILE = `${STATE_DIR}/real-node.lock`;

export interface LockHolder {
  readonly pid: number;
  readonly startTime: string;
  readonly command: string;
  readonly cwd: string;
  readonly since: string;
  /** The script that restores what this holder changed (see host-journal.ts). */
  readonly teardown: string;
}

export interface LockOptions {
  /** How long to wait for another real node to stop; 0 (the default) refuses at once. */
  readonly waitMs?: number;
  /** Told once when the lock is held by another process and we wait. */
  readonly onWait?: (holder: LockHolder) => void;
}

export class RealNodeBusyError extends Error {
  readonly holder: LockHolder;

  constructor(holder: LockHolder, waitedMs: number) {
    super(
      `another real node is running on this machine (one per machine: kubelet, the bridge and the iptables rules ` +
        `are machine-wide): pid ${holder.pid}, "${holder.command}" in ${holder.cwd}, since ${holder.since}` +
        (waitedMs > 0 ? `; waited ${Math.round(waitedMs / 1000)} s for it` : '') +
        `. Stop it, or wait for it: ControlPlane.start({ node: 'real', realNode: { lockWaitMs } }), ` +
        `npm run cluster -- --node real --wait-for-node <seconds>, or SAMPLEDB_REAL_NODE_WAIT=<seconds> for the e2e tier.`,
    );
    this.name = 'RealNodeBusyError';
    this.holder = holder;
  }
}

async function readHolder(): Promise<LockHolder | undefined> {
  try {
    return JSON.parse(await readFile(LOCK_FILE, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

async function alive(holder: LockHolder): Promise<boolean> {
  return (await processStartTime(holder.pid)) === holder.startTime;
}

/** Runs what a dead holder left (its teardown script), synchronously in the sense of awaiting it. */
function runTeardown(script: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('sh', [script], { stdio: 'ignore' });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

export async function acquireNodeLock(options: LockOptions = {}): Promise<LockHolder> {
  await mkdir(STATE_DIR, { recursive: true });
  const startTime = await processStartTime(process.pid);
  if (!startTime) throw new Error('cannot read /proc/self/stat');
  const me: LockHolder = {
    pid: process.pid,
    startTime,
    command: process.argv.slice(1).join(' '),
    cwd: process.cwd(),
    since: new Date().toISOString(),
    teardown: `${STATE_DIR}/real-node-teardown-${process.pid}.sh`,
  };
  const started = Date.now();
  let told = false;
  for (;;) {
    try {
      await writeFile(LOCK_FILE, JSON.stringify(me), { flag: 'wx' });
      return me;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder();
    if (!holder) {
      // Being written this instant, or unreadable garbage: look again shortly, then treat as stale.
      await sleep(200);
      if (!(await readHolder())) await rm(LOCK_FILE, { force: true });
      continue;
    }
    if (!(await alive(holder))) {
      // Its watchdog may still be restoring the machine; the script is idempotent, so run it (again) first.
      if (holder.teardown && existsSync(holder.teardown)) await runTeardown(holder.teardown);
      if (JSON.stringify(await readHolder()) === JSON.stringify(holder)) await rm(LOCK_FILE, { force: true });
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= (options.waitMs ?? 0)) throw new RealNodeBusyError(holder, waited);
    if (!told) {
      options.onWait?.(holder);
      told = true;
    }
    await sleep(1000);
  }
}
