// What the real node changes on the machine, and the one script that undoes it. The journal is written before each
// change is made, and the script is rewritten with it, so a run that dies at any point leaves a script that restores
// the machine: stop() runs it, so do the exit hook and, when the test process was SIGKILLed, the watchdog.
import { existsSync } from 'node:fs';
import { readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shellQuote, sysctlPath } from './host.ts';

export interface HostChanges {
  /** The process that owns the node: the teardown releases the lock only if it still names this one. */
  readonly owner: { readonly pid: number; readonly startTime: string };
  readonly workDir: string;
  readonly lockFile: string;
  /** The bridge, once this node created it. */
  bridge?: string;
  /** iptables-save / ip6tables-save output taken before any rule was added. */
  iptables?: { v4: string; v6?: string };
  /** The NetworkPolicy agent, once started: its binary removes its nftables table (`-cleanup`). */
  netpolAgent?: string;
  /** Original values of the sysctls the node's components may change. */
  readonly sysctls: Record<string, string>;
  /** The node's cgroup tree, one root per v1 hierarchy (removed with everything kubelet created below). */
  readonly cgroupTrees: string[];
  /** Parent cgroup directories created for the tree, outermost first. */
  readonly cgroupParents: string[];
  /** Paths that did not exist before the node (kubelet and CNI write a few fixed ones). */
  readonly createdPaths: string[];
  /** Network namespaces present before the node started (containerd creates one per pod in /run/netns). */
  readonly netnsBefore: string[];
}

const q = shellQuote;

/** The teardown script for the changes recorded so far. POSIX sh, no dependency on Node or on this checkout. */
export function teardownScript(changes: HostChanges): string {
  const lines = [
    '#!/bin/sh',
    '# Written by src/envtest/real-node/host-journal.ts: undoes what the real test node changed on this machine.',
    '# Run by stop(), by the exit hook, or by the watchdog when the test process died. Safe to run more than once.',
    'set +u',
    `WORK=${q(changes.workDir)}`,
    `TREES=${q(changes.cgroupTrees.join(' '))}`,
    '',
    '# 1. Every process of the node: its daemons and all containers run inside its cgroup tree.',
    'tree_pids() { for t in $TREES; do [ -d "$t" ] && find "$t" -name cgroup.procs -exec cat {} + 2>/dev/null; done | sort -u; }',
    'i=0',
    'while [ $i -lt 40 ]; do',
    '  pids=$(tree_pids)',
    '  [ -z "$pids" ] && break',
    '  for pid in $pids; do kill -9 "$pid" 2>/dev/null; done',
    '  sleep 0.25',
    '  i=$((i + 1))',
    'done',
    '',
    "# 2. Mounts below the work dir (volumes, pod volumes, container roots) and the pods' network namespaces,",
    '#    deepest first, until none is left (mounts can be stacked).',
    `NETNS_BEFORE=${q(changes.netnsBefore.join(' '))}`,
    'ours() {',
    '  awk -v w="$WORK/" \'index($5, w) == 1 || index($5, "/run/netns/cni-") == 1 { print $5 }\' /proc/self/mountinfo |',
    '    while read -r m; do case " $NETNS_BEFORE " in *" $m "*) ;; *) echo "$m" ;; esac; done',
    '}',
    'i=0',
    'while [ $i -lt 10 ]; do',
    '  mounts=$(ours | awk \'{ print length($0) " " $0 }\' | sort -rn | cut -d" " -f2-)',
    '  [ -z "$mounts" ] && break',
    '  for m in $mounts; do umount -l "$m" 2>/dev/null; done',
    '  i=$((i + 1))',
    'done',
    'for ns in /run/netns/cni-*; do',
    '  [ -e "$ns" ] || continue',
    '  case " $NETNS_BEFORE " in *" $ns "*) ;; *) rm -f "$ns" ;; esac',
    'done',
    '',
    '# 3. The loop devices behind the volumes.',
    'for f in "$WORK"/volumes/*.img; do',
    '  [ -e "$f" ] || continue',
    '  for dev in $(losetup -n -O NAME -j "$f" 2>/dev/null); do losetup -d "$dev" 2>/dev/null; done',
    'done',
    '',
  ];
  if (changes.netpolAgent)
    lines.push(
      "# 3b. The NetworkPolicy agent's nftables table (it removes it itself when it stops cleanly).",
      `${q(changes.netpolAgent)} -cleanup 2>/dev/null`,
      '',
    );
  if (changes.bridge) lines.push('# 4. The bridge.', `ip link del ${q(changes.bridge)} 2>/dev/null`, '');
  if (changes.iptables) {
    lines.push(
      "# 5. The iptables rules as they were (kube-proxy's chains and the isolation rules go with it).",
      '# A table that did not exist then is not in the saved set: empty it instead.',
      'restore_tables() {',
      '  "$1-restore" < "$2"',
      '  for t in filter nat mangle raw; do',
      '    grep -qx "\\*$t" "$2" || { "$1" -t "$t" -F 2>/dev/null; "$1" -t "$t" -X 2>/dev/null; }',
      '  done',
      '}',
      `restore_tables iptables ${q(changes.iptables.v4)}`,
      ...(changes.iptables.v6 ? [`restore_tables ip6tables ${q(changes.iptables.v6)}`] : []),
      '',
    );
  }
  lines.push('# 6. Kernel settings kubelet, kube-proxy and the CNI bridge plugin change.');
  for (const [key, value] of Object.entries(changes.sysctls)) {
    lines.push(
      `[ "$(cat ${q(sysctlPath(key))} 2>/dev/null)" = ${q(value)} ] || echo ${q(value)} > ${q(sysctlPath(key))}`,
    );
  }
  lines.push(
    '',
    '# 7. The cgroup tree (with what kubelet created below it), then the parents made for it.',
    'for t in $TREES; do',
    '  [ -d "$t" ] || continue',
    '  for attempt in 1 2 3 4 5; do',
    '    find "$t" -depth -type d -exec rmdir {} \\; 2>/dev/null',
    '    [ -d "$t" ] || break',
    '    sleep 0.2',
    '  done',
    'done',
    ...[...changes.cgroupParents].reverse().map((dir) => `rmdir ${q(dir)} 2>/dev/null`),
    '',
    '# 8. Paths that did not exist before, and the work dir (never crossing into a mount).',
    ...[...changes.createdPaths].reverse().map((path) => `rm -rf --one-file-system ${q(path)}`),
    'rm -rf --one-file-system "$WORK"',
    '',
    '# 9. The lock, if this node still holds it.',
    `if grep -q ${q(`"pid":${changes.owner.pid},"startTime":"${changes.owner.startTime}"`)} ${q(changes.lockFile)} 2>/dev/null; then`,
    ...(changes.iptables
      ? [`  rm -f ${q(changes.iptables.v4)}${changes.iptables.v6 ? ` ${q(changes.iptables.v6)}` : ''}`]
      : []),
    `  rm -f ${q(changes.lockFile)}`,
    'fi',
    'rm -f "$0"',
    '',
  );
  return lines.join('\n');
}

/** Keeps the teardown script in step with the recorded changes. */
export class HostJournal {
  readonly changes: HostChanges;
  readonly scriptPath: string;

  constructor(changes: HostChanges, scriptPath: string) {
    this.changes = changes;
    this.scriptPath = scriptPath;
  }

  /** Records a change (call before making it) and rewrites the script atomically. */
  async record(update: (changes: HostChanges) => void = () => {}): Promise<void> {
    update(this.changes);
    const temp = `${this.scriptPath}.${process.pid}.tmp`;
    await writeFile(temp, teardownScript(this.changes), { mode: 0o700 });
    await rename(temp, this.scriptPath);
  }

  /** Records `path` as created by the node when it does not exist yet. */
  async willCreate(path: string): Promise<void> {
    if (existsSync(path) || this.changes.createdPaths.includes(path)) return;
    await this.record((c) => c.createdPaths.push(path));
  }
}

export async function networkNamespaces(): Promise<string[]> {
  try {
    return (await readdir('/run/netns')).map((name) => join('/run/netns', name));
  } catch {
    return [];
  }
}
