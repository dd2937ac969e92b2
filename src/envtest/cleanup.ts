import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

/**
 * Last-resort cleanup for when a test run dies without calling stop(): kills every child process group and
 * removes temp dirs synchronously on exit and on SIGINT/SIGTERM/SIGHUP. Children run in their own process
 * group (so a terminal Ctrl-C cannot kill etcd before the apiserver), which means nobody else will kill them.
 */
const processGroups = new Set<number>();
const directories = new Set<string>();
/** Scripts that restore the machine (the real node's teardown), run after the processes are gone. */
const teardowns = new Set<string>();
let installed = false;

const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function cleanupNow(): void {
  for (const pgid of processGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  processGroups.clear();
  for (const script of teardowns) spawnSync('sh', [script], { stdio: 'ignore', timeout: 60_000 });
  teardowns.clear();
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  // Another listener (e.g. the cluster CLI) owns a graceful shutdown; the exit hook remains the backstop.
  if (process.listenerCount(signal) > 1) return;
  cleanupNow();
  // Keep the default meaning of the signal: terminate.
  for (const s of signals) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupNow);
  for (const signal of signals) process.on(signal, onSignal);
}

/**
 * Exit hooks do not run when this process is SIGKILLed (e.g. a CI job timeout); a detached shell per
 * resource then does the cleanup. It ends on its own once the resource is gone.
 */
function watchdog(script: string, ...args: string[]): void {
  const parent = String(process.pid);
  spawn('sh', ['-c', script, 'envtest-watchdog', parent, ...args], {
    detached: true,
    stdio: 'ignore',
  }).unref();
}

export function trackProcessGroup(pgid: number): void {
  install();
  processGroups.add(pgid);
  watchdog(
    'while kill -0 "$1" 2>/dev/null && kill -0 "-$2" 2>/dev/null; do sleep 1; done; kill -0 "$1" 2>/dev/null || kill -9 "-$2" 2>/dev/null',
    String(pgid),
  );
}

export function untrackProcessGroup(pgid: number): void {
  processGroups.delete(pgid);
}

export function trackDirectory(dir: string): void {
  install();
  directories.add(dir);
  watchdog(
    'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done; kill -0 "$1" 2>/dev/null || rm -rf -- "$2"',
    dir,
  );
}

export function untrackDirectory(dir: string): void {
  directories.delete(dir);
}

/** Runs `script` (POSIX sh, idempotent, removes itself when done) if this process dies before untracking it. */
export function trackTeardown(script: string): void {
  install();
  teardowns.add(script);
  watchdog(
    'while kill -0 "$1" 2>/dev/null && [ -f "$2" ]; do sleep 1; done; kill -0 "$1" 2>/dev/null || { [ -f "$2" ] && sh "$2"; }',
    script,
  );
}

export function untrackTeardown(script: string): void {
  teardowns.delete(script);
}
