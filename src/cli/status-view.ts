// The `kubectl sampledb status` view: one SampleDB object (as the apiserver returns it) → the text to print. Pure.
import type { SampleDbObject } from '../api/sampledb.ts';

interface ViewCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** Renders rows as aligned columns (two spaces between them), like kubectl's tables. */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** `now` is passed in so ages are testable. */
export function statusView(db: SampleDbObject, now: Date = new Date()): string {
  const status = db.status ?? {};
  const spec = (db.spec ?? {}) as { version?: string; instances?: number };
  const meta = db.metadata ?? {};
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`${`${label}:`.padEnd(14)}${value}`);
  field('Name', `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}`);
  field('Phase', status.phase ?? '(not reported yet)');
  const running = status.currentVersion ? ` (running ${status.currentVersion})` : '';
  field('Version', `${spec.version ?? '(default)'}${running}`);
  if (status.upgrade) {
    const upgrade = status.upgrade as Record<string, unknown>;
    const parts = ['step', 'fromMajor', 'toMajor', 'backup', 'message']
      .filter((k) => upgrade[k] !== undefined && typeof upgrade[k] !== 'object')
      .map((k) => `${k}=${String(upgrade[k])}`);
    field('Upgrade', parts.join(' ') || '(in progress)');
  }
  if (status.endpoint) field('Endpoint', status.endpoint);
  if (status.binding?.name) field('Binding', `Secret ${status.binding.name}`);
  const lastBackup = status.lastBackup;
  field(
    'Last backup',
    lastBackup
      ? `${lastBackup.name}${lastBackup.completionTime ? ` completed ${lastBackup.completionTime} (${age(lastBackup.completionTime, now)} ago)` : ''}`
      : 'none',
  );
  if (
    meta.generation !== undefined &&
    status.observedGeneration !== undefined &&
    status.observedGeneration < meta.generation
  )
    field('Note', `status is for generation ${status.observedGeneration}, the spec is at ${meta.generation}`);

  const replication = status.replication;
  lines.push('');
  const instances = replication?.instances ?? [];
  if (instances.length > 0) {
    const term = replication?.term !== undefined ? `, term ${replication.term}` : '';
    lines.push(
      `Instances (${instances.length} of ${spec.instances ?? 1} requested; primary ${replication?.primary ?? 'none'}${term}):`,
    );
    const rows = [['NAME', 'ROLE', 'READY', 'STREAMING', 'LAG']];
    for (const instance of instances) {
      const primary = instance.name === replication?.primary ? ' (elected)' : '';
      rows.push([
        instance.name,
        `${instance.role}${primary}`,
        instance.ready ? 'yes' : 'no',
        instance.streaming === undefined
          ? '-'
          : instance.streaming
            ? 'yes'
            : `no${instance.notStreamingSince ? ` (since ${instance.notStreamingSince})` : ''}`,
        instance.lagBytes !== undefined ? `${instance.lagBytes} B` : '-',
      ]);
    }
    lines.push(...table(rows).map((l) => `  ${l}`));
    if (replication?.handover) {
      const h = replication.handover;
      lines.push(`  ${h.reason} in progress from ${h.from}${h.lsn ? ` (target must reach ${h.lsn})` : ''}`);
    }
    if (replication?.primaryUnavailableSince)
      lines.push(`  primary unavailable since ${replication.primaryUnavailableSince}`);
  } else {
    lines.push(
      `Instances: ${spec.instances ?? 1} requested; the operator reports no instances (status.replication).`,
    );
  }
  lines.push('');
  const conditions = (status.conditions ?? []) as ViewCondition[];
  if (conditions.length === 0) {
    lines.push('Conditions: none reported yet');
  } else {
    lines.push('Conditions:');
    const rows = [['TYPE', 'STATUS', 'REASON', 'AGE', 'MESSAGE']];
    for (const c of conditions)
      rows.push([
        c.type ?? '',
        c.status ?? '',
        c.reason ?? '',
        c.lastTransitionTime ? age(c.lastTransitionTime, now) : '',
        c.message ?? '',
      ]);
    lines.push(...table(rows).map((l) => `  ${l}`));
  }
  return `${lines.join('\n')}\n`;
}

/** kubectl-style age: 45s, 12m, 3h, 5d. */
export function age(time: string, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - Date.parse(time)) / 1000));
  if (Number.isNaN(seconds)) return '?';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}
