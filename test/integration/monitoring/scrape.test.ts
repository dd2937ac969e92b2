// Prometheus (Debian's `prometheus`) scrapes the real operator's /metrics and a real postgres_exporter (Debian's
// `prometheus-postgres-exporter`) in front of a real PostgreSQL on loopback, with the synthesized rules loaded. The
// exporter logs in as the monitoring role that the real role script created with the password from the Secret the
// real operator generated (the operator also creates the role Job, once kwok has completed the init Job). The Grafana dashboard may use only metric names seen here.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { dashboardMetricNames, sampleDbAlertNames } from '../../../src/constructs/index.ts';
import { freePorts, pollUntil } from '../../../src/envtest/index.ts';
import { EXPORTER_CONTAINER, MONITORING_ROLE } from '../../../src/sampledb/exporter.ts';
import { monitoringRoleJobName } from '../../../src/sampledb/monitoring-role-job.ts';
import {
  MONITORING_ROLE_SCRIPT,
  monitoringRoleScriptEnv,
} from '../../../src/sampledb/scripts/monitoring-role.ts';
import { findPostgresBinDir, type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';
import { sharedCluster, type TestCluster, testNamespace } from '../support/cluster.ts';
import { crdManifests } from '../support/manifests.ts';
import { OperatorProcess } from '../support/operator.ts';

const clusterReady = sharedCluster();
const children: ChildProcess[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'sampledb-monitoring-'));

function startProcess(command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = `${output}${chunk}`.slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  Object.defineProperty(child, 'recentOutput', { get: () => output });
  children.push(child);
  return child;
}
const outputOf = (child: ChildProcess) => (child as ChildProcess & { recentOutput: string }).recentOutput;
const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? `exited: ${outputOf(child)}` : undefined;

async function getJson<T>(url: string): Promise<T | undefined> {
  try {
    const response = await fetch(url);
    return response.ok ? ((await response.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

describe('monitoring: Prometheus scrapes the operator and a real exporter', {
  skip: findPostgresBinDir() ? false : 'PostgreSQL is not installed',
}, () => {
  let cluster: TestCluster;
  let namespace: string;
  let operator: OperatorProcess;
  let pg: PostgresServer;
  let prometheusUrl: string;
  let monitorPassword: string;
  let metricsPort: number | undefined;

  async function kubectl(args: string[], input?: string): Promise<string> {
    const result = await cluster.kubectl(args, input === undefined ? {} : { input });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  }

  before(async () => {
    cluster = await clusterReady;
    await kubectl(
      ['apply', '--server-side', '-f', '-'],
      crdManifests()
        .map((m) => JSON.stringify(m))
        .join('\n'),
    );
    await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/sampledbs.sampledb.io']);
    namespace = await testNamespace(cluster, 'monitoring');
    [metricsPort] = await freePorts(1);
    // The operator runs with leader election, as deployed: its Lease lives in the operator's namespace.
    await kubectl(
      ['apply', '--server-side', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sampledb-system' } }),
    );
    operator = OperatorProcess.start({
      kubeconfigPath: cluster.kubeconfigPath,
      env: { WATCH_NAMESPACES: namespace, METRICS_PORT: String(metricsPort) },
    });
    pg = await startPostgres();
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await operator?.stop();
    await pg?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the operator generates the monitoring Secret and adds the exporter sidecar', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDB',
        metadata: { name: 'orders', namespace },
        spec: {
          version: '16',
          storage: { size: '1Gi' },
          backup: { schedule: '@daily' },
          deletion: { policy: 'Delete' },
          monitoring: { exporter: { enabled: true } },
        },
      }),
    );
    const secret = await pollUntil(
      'the monitoring Secret',
      async () => {
        const r = await cluster.kubectl([
          '-n',
          namespace,
          'get',
          'secret',
          'orders-monitoring',
          '-o',
          'json',
        ]);
        return r.code === 0 ? (JSON.parse(r.stdout) as { data: Record<string, string> }) : undefined;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        failFast: () => (operator.running ? undefined : 'the operator exited'),
      },
    );
    assert.equal(Buffer.from(secret.data.username ?? '', 'base64').toString(), MONITORING_ROLE);
    monitorPassword = Buffer.from(secret.data.password ?? '', 'base64').toString();
    assert.match(monitorPassword, /^[A-Za-z0-9]{40}$/);
    // The password appears nowhere but in the Secret: not in the operator's log.
    assert.ok(!operator.lines.some((line) => line.includes(monitorPassword)));
    const sts = await pollUntil(
      'the StatefulSet',
      async () => {
        const r = await cluster.kubectl(['-n', namespace, 'get', 'statefulset', 'orders', '-o', 'json']);
        return r.code === 0 ? JSON.parse(r.stdout) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const names = sts.spec.template.spec.containers.map((c: { name: string }) => c.name);
    assert.deepEqual(names, ['postgres', EXPORTER_CONTAINER]);
  });

  it('once the init Job has succeeded, the operator runs the role Job for that Secret', async () => {
    const secret = JSON.parse(
      await kubectl(['-n', namespace, 'get', 'secret', 'orders-monitoring', '-o', 'json']),
    );
    const name = monitoringRoleJobName('orders', secret.metadata.uid);
    // kwok completes the Job pods (the scripts themselves run against the loopback server below).
    const job = await pollUntil(
      `Job ${name}`,
      async () => {
        const r = await cluster.kubectl(['-n', namespace, 'get', 'job', name, '-o', 'json']);
        return r.code === 0 ? JSON.parse(r.stdout) : undefined;
      },
      {
        timeoutMs: 90_000,
        intervalMs: 500,
        failFast: () => (operator.running ? undefined : 'the operator exited'),
      },
    );
    const env = job.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    assert.ok(
      !JSON.stringify(job).includes(monitorPassword),
      'the password is referenced, never copied, into the Job',
    );
    assert.equal(env.find((e) => e.name === 'SAMPLEDB_MONITOR_ROLE')?.value, MONITORING_ROLE);
  });

  it('the role script creates the monitoring role with pg_monitor only', async () => {
    const run = await runScript(MONITORING_ROLE_SCRIPT, {
      ...monitoringRoleScriptEnv({
        host: pg.host,
        port: pg.port,
        role: MONITORING_ROLE,
        waitSeconds: 30,
        terminationLog: join(scratch, 'termination'),
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
      SAMPLEDB_MONITOR_PASSWORD: monitorPassword,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(monitorPassword), 'the password is not logged');
    assert.equal(
      pg.query(
        `SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, pg_has_role('${MONITORING_ROLE}', 'pg_monitor', 'MEMBER') FROM pg_roles WHERE rolname = '${MONITORING_ROLE}'`,
      ),
      'f|f|f|f|f|t',
    );
    assert.equal(
      pg.query(
        `SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = '${MONITORING_ROLE}'`,
      ),
      '1',
    );
  });

  it('Prometheus scrapes both; the rules load; the dashboard uses only metric names it saw', async () => {
    const [exporterPort, prometheusPort] = await freePorts(2);
    // The sidecar's settings, pointed at the loopback server's port.
    const exporter = startProcess(
      'prometheus-postgres-exporter',
      [`--web.listen-address=127.0.0.1:${exporterPort}`],
      {
        DATA_SOURCE_URI: `${pg.host}:${pg.port}/postgres?sslmode=disable`,
        DATA_SOURCE_USER: MONITORING_ROLE,
        DATA_SOURCE_PASS: monitorPassword,
      },
    );
    // The operator serves /metrics on METRICS_PORT once it has started.
    const started = await pollUntil(
      'the operator to serve /metrics',
      async () =>
        (await fetch(`http://127.0.0.1:${metricsPort}/metrics`).catch(() => undefined))?.ok
          ? metricsPort
          : undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        failFast: () => (operator.running ? undefined : 'the operator exited'),
      },
    );
    const dist = parseAllDocuments(readFileSync('dist/0003-sampledb-monitoring.k8s.yaml', 'utf8')).map((d) =>
      d.toJS(),
    );
    writeFileSync(join(scratch, 'rules.yaml'), stringify(dist.find((d) => d.kind === 'PrometheusRule').spec));
    writeFileSync(
      join(scratch, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [join(scratch, 'rules.yaml')],
        scrape_configs: [
          // The labels the ServiceMonitor and the PodMonitor give their targets.
          {
            job_name: 'sampledb-operator-metrics',
            honor_labels: true,
            static_configs: [{ targets: [`127.0.0.1:${started}`], labels: { namespace: 'sampledb-system' } }],
          },
          {
            job_name: 'sampledb-system/sampledb-databases',
            static_configs: [
              {
                targets: [`127.0.0.1:${exporterPort}`],
                labels: { namespace, sampledb: 'orders', pod: 'orders-0', container: EXPORTER_CONTAINER },
              },
            ],
          },
        ],
      }),
    );
    const prometheus = startProcess('prometheus', [
      `--config.file=${join(scratch, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(scratch, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
    ]);
    prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
    const failFast = () => exited(prometheus) ?? exited(exporter);
    type Targets = {
      data: { activeTargets: { labels: { job: string }; health: string; lastError: string }[] };
    };
    await pollUntil(
      'both targets up',
      async () => {
        const targets = (await getJson<Targets>(`${prometheusUrl}/api/v1/targets`))?.data.activeTargets ?? [];
        return targets.length === 2 && targets.every((t) => t.health === 'up') ? targets : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, failFast },
    );
    type Vector = { data: { result: { value: [number, string] }[] } };
    const pgUp = await pollUntil(
      'pg_up',
      async () =>
        (await getJson<Vector>(`${prometheusUrl}/api/v1/query?query=pg_up`))?.data.result[0]?.value[1],
      { timeoutMs: 30_000, intervalMs: 500, failFast },
    );
    assert.equal(pgUp, '1', `the exporter logs in as ${MONITORING_ROLE}: ${outputOf(exporter)}`);

    type Rules = { data: { groups: { rules: { name: string; health: string }[] }[] } };
    const rules =
      (await getJson<Rules>(`${prometheusUrl}/api/v1/rules`))?.data.groups.flatMap((g) => g.rules) ?? [];
    assert.deepEqual(rules.map((r) => r.name).sort(), sampleDbAlertNames().sort());

    const wanted = dashboardMetricNames();
    let seen = new Set<string>();
    await pollUntil(
      'every dashboard metric name to be scraped',
      async () => {
        const names =
          (await getJson<{ data: string[] }>(`${prometheusUrl}/api/v1/label/__name__/values`))?.data ?? [];
        seen = new Set(names);
        return wanted.every((n) => seen.has(n)) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, failFast },
    ).catch((err) => {
      assert.fail(`${err}: not seen: ${wanted.filter((n) => !seen.has(n)).join(', ')}`);
    });
    for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name} evaluates`);
  });
});
