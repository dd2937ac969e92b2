// What the replication e2e tests share: the record as kubectl shows it, waiting for a settled cluster (one primary,
// the replicas Ready and streaming), a client writing numbered rows through the client Service, what it lost, the
// election Events, and a hung primary (its processes stopped from the host, as a frozen machine).
import { readdir, readFile } from 'node:fs/promises';
import { pollUntil } from '../../../src/envtest/index.ts';
import type { E2eCluster } from './cluster.ts';
import { OPERATOR_NAMESPACE } from './install.ts';
import { type Condition, kubectlJson, kubectlOk, sql } from './sampledb.ts';

export interface InstanceView {
  name: string;
  role: string;
  ready: boolean;
  streaming?: boolean;
  notStreamingSince?: string;
  lagBytes?: number;
}

export interface Replication {
  primary?: string;
  term?: number;
  handover?: unknown;
  instances?: InstanceView[];
}

export class ReplicatedDb {
  readonly cluster: E2eCluster;
  readonly namespace: string;
  readonly name: string;

  constructor(cluster: E2eCluster, namespace: string, name: string) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.name = name;
  }

  async status(): Promise<{ replication: Replication; conditions: Condition[] }> {
    const db = await kubectlJson<{ status?: { replication?: Replication; conditions?: Condition[] } }>(
      this.cluster,
      ['get', 'sampledb', this.name, '-n', this.namespace],
    );
    return { replication: db?.status?.replication ?? {}, conditions: db?.status?.conditions ?? [] };
  }

  /** Asks for a switchover as a user does: the sampledb.io/switchover-to annotation. */
  async switchoverTo(pod: string): Promise<void> {
    await kubectlOk(this.cluster, [
      'annotate',
      'sampledb',
      this.name,
      '-n',
      this.namespace,
      '--overwrite',
      `sampledb.io/switchover-to=${pod}`,
    ]);
  }

  async setInstances(instances: number): Promise<void> {
    await kubectlOk(this.cluster, [
      'patch',
      'sampledb',
      this.name,
      '-n',
      this.namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { instances } }),
    ]);
  }

  async replication(): Promise<Replication> {
    return (await this.status()).replication;
  }

  /** What the cluster shows, for a failure message. */
  async diagnostics(): Promise<string> {
    const show = async (args: string[]) => {
      const r = await this.cluster.kubectl(args);
      return r.stdout + r.stderr;
    };
    const pods = (await this.replication()).instances?.map((i) => i.name) ?? [];
    const parts = [
      JSON.stringify((await this.status()).replication),
      await show(['get', 'pods', '-n', this.namespace, '-L', 'sampledb.io/role', '-o', 'wide']),
      await show(['get', 'events', '-n', this.namespace, '--sort-by=.lastTimestamp']),
      ...(await Promise.all(
        pods.map(
          async (p) =>
            `--- ${p}\n${await show(['logs', p, '-n', this.namespace, '-c', 'postgres', '--tail=15'])}`,
        ),
      )),
    ];
    const operator = await show([
      'logs',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/name=sampledb-operator',
      '--tail=300',
    ]);
    parts.push(
      `--- operator\n${operator
        .split('\n')
        .filter((l) => /error|warn|fail/i.test(l))
        .slice(-15)
        .join('\n')}`,
    );
    return parts.join('\n');
  }

  /**
   * One primary (not `notPrimary`), no handover, and `replicas` replicas Ready and streaming as the status shows
   * them; returns the record.
   */
  async settled(
    timeoutMs: number,
    opts: { notPrimary?: string; replicas?: number } = {},
  ): Promise<Replication> {
    const replicas = opts.replicas ?? 2;
    try {
      return await pollUntil(
        `one primary and ${replicas} ready, streaming replicas`,
        async () => {
          const r = await this.replication();
          const streaming = r.instances?.filter((i) => i.role === 'replica' && i.ready && i.streaming) ?? [];
          const primaries = r.instances?.filter((i) => i.role === 'primary') ?? [];
          return r.primary &&
            r.primary !== opts.notPrimary &&
            !r.handover &&
            primaries.length === 1 &&
            primaries[0]?.name === r.primary &&
            streaming.length === replicas &&
            r.instances?.length === replicas + 1
            ? r
            : undefined;
        },
        { timeoutMs, intervalMs: 500 },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await this.diagnostics()}`);
    }
  }

  /** The Events of elections on the SampleDB: reason and note. */
  async electionEvents(): Promise<{ reason?: string; note?: string; series?: { count?: number } }[]> {
    const events = await kubectlJson<{
      items: { reason?: string; note?: string; series?: { count?: number } }[];
    }>(this.cluster, [
      'get',
      'events.events.k8s.io',
      '-n',
      this.namespace,
      '--field-selector',
      `regarding.name=${this.name}`,
    ]);
    return events?.items ?? [];
  }

  /** How many times the operator re-cloned `pod` (its InstanceRejoined Events, repeats counted). */
  async reclones(pod: string): Promise<number> {
    return (await this.electionEvents())
      .filter((e) => e.reason === 'InstanceRejoined' && e.note?.startsWith(`${pod} `))
      .reduce((n, e) => n + (e.series?.count ?? 1), 0);
  }

  /** How a rejoined instance came back: its fencing and re-clone Events, the replication lines of its server log. */
  async rejoinReport(pod: string): Promise<string> {
    const events = (await this.electionEvents())
      .filter(
        (e) =>
          ['InstanceRejoined', 'PrimaryFenced'].includes(e.reason ?? '') && e.note?.startsWith(`${pod} `),
      )
      .map((e) => `${e.reason}: ${e.note}${(e.series?.count ?? 1) > 1 ? ` (x${e.series?.count})` : ''}`);
    const log = await this.cluster.kubectl(['logs', pod, '-n', this.namespace, '-c', 'postgres']);
    const lines = log.stdout
      .split('\n')
      .filter((l) =>
        /timeline|forked|requested starting point|started streaming|could not|sampledb-start/i.test(l),
      )
      .slice(0, 12);
    return `${events.join('; ') || 'no fencing or re-clone Events'}\n${lines.join('\n')}`;
  }

  /** The acknowledged rows (numbers) the table does not hold. */
  async lost(acknowledged: readonly number[]): Promise<number[]> {
    const stored = new Set(
      (await sql(this.cluster, this.namespace, this.name, 'SELECT n FROM numbered;'))
        .split('\n')
        .filter(Boolean)
        .map(Number),
    );
    return acknowledged.filter((n) => !stored.has(n));
  }

  async count(): Promise<number> {
    return Number(await sql(this.cluster, this.namespace, this.name, 'SELECT count(*) FROM numbered;'));
  }

  /** Waits until the client has written more than `rows` rows. */
  async written(rows: number): Promise<void> {
    await pollUntil('rows written', async () => ((await this.count()) > rows ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
  }
}

/** A client that inserts numbered rows as fast as psql connects, logging "ok|fail <n> <epoch ms>". */
export const WRITER = (seconds: number) => `
end=$(( $(date +%s) + ${seconds} ))
i=0
while [ "$(date +%s)" -lt "$end" ]; do
  i=$((i+1))
  if PGCONNECT_TIMEOUT=2 psql "$URI" -X -q -c "INSERT INTO numbered VALUES ($i)" >/dev/null 2>&1; then
    echo "ok $i $(date +%s%3N)"
  else
    echo "fail $i $(date +%s%3N)"
    sleep 0.05
  fi
done`;

export interface Write {
  ok: boolean;
  n: number;
  at: number;
}

export const parseWrites = (logs: string): Write[] =>
  logs
    .split('\n')
    .map((line) => /^(ok|fail) (\d+) (\d+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ ok: m[1] === 'ok', n: Number(m[2]), at: Number(m[3]) }));

/**
 * From `since` (the kill) to the first acknowledged write after the outage: the acknowledged write that ends the
 * longest gap between acknowledged writes from `since` on. Failed writes and a stall (a synchronous commit waiting
 * for a standby, an INSERT hung on a frozen primary) both show as such a gap.
 */
export function downtime(writes: readonly Write[], since: number): number | undefined {
  let previous = since;
  let longest = -1;
  let end: number | undefined;
  for (const w of writes) {
    if (!w.ok || w.at < since) continue;
    if (w.at - previous > longest) {
      longest = w.at - previous;
      end = w.at;
    }
    previous = w.at;
  }
  return end === undefined ? undefined : end - since;
}

/**
 * The host PIDs of a pod's PostgreSQL processes (comm "postgres": the postmaster and its children, not the
 * exporter), found by the pod's cgroup. The tests run as root on the node's machine.
 */
export async function postgresPids(cluster: E2eCluster, namespace: string, pod: string): Promise<number[]> {
  const uid = (
    await kubectlJson<{ metadata: { uid: string } }>(cluster, ['get', 'pod', pod, '-n', namespace])
  )?.metadata.uid;
  if (!uid) throw new Error(`pod ${pod} not found`);
  const marks = [`pod${uid}`, `pod${uid.replaceAll('-', '_')}`];
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [cgroup, comm] = await Promise.all([
        readFile(`/proc/${entry}/cgroup`, 'utf8'),
        readFile(`/proc/${entry}/comm`, 'utf8'),
      ]);
      if (comm.trim() === 'postgres' && marks.some((m) => cgroup.includes(m))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Sends `signal` to every PostgreSQL process of the pod; returns how many. */
export async function signalPostgres(
  cluster: E2eCluster,
  namespace: string,
  pod: string,
  signal: 'SIGSTOP' | 'SIGKILL',
): Promise<number> {
  const pids = await postgresPids(cluster, namespace, pod);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
  return pids.length;
}
