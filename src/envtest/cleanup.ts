import { rmSync } from 'node:fs';

/**
 * Last-resort cleanup for when a test run dies without calling stop(): kills every child process group and
 * removes temp dirs synchronously on exit and on SIGINT/SIGTERM/SIGHUP. Children run in their own process
 * group (so a terminal Ctrl-C cannot kill etcd before the apiserver), which means nobody else will kill them.
 */
const processGroups = new Set<number>();
const directories = new Set<string>();
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
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  cleanupNow();
  // Another listener (e.g. the cluster CLI) owns shutdown; otherwise keep the default meaning of the signal.
  if (process.listenerCount(signal) > 1) return;
  for (const s of signals) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupNow);
  for (const signal of signals) process.on(signal, onSignal);
}

export function trackProcessGroup(pgid: number): void {
  install();
  processGroups.add(pgid);
}

export function untrackProcessGroup(pgid: number): void {
  processGroups.delete(pgid);
}

export function trackDirectory(dir: string): void {
  install();
  directories.add(dir);
}

export function untrackDirectory(dir: string): void {
  directories.delete(dir);
}
