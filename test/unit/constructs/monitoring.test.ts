import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import { Registry } from 'prom-client';
import { parse, parseAllDocuments, stringify } from 'yaml';
import {
  DATABASE_POD_SELECTOR,
  dashboardMetricNames,
  EXPORTER_PORT_NAME,
  SampleDbMonitoring,
  SampleDbOperator,
  sampleDbAlertGroups,
  sampleDbAlertNames,
  sampleDbDashboard,
} from '../../../src/constructs/index.ts';
import { runtimeMetrics } from '../../../src/runtime/metrics.ts';
import { EXPORTER_PORT_NAME as SIDECAR_PORT_NAME } from '../../../src/sampledb/exporter.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { registerSampleDbMetrics } from '../../../src/sampledb/metrics.ts';
import { sampleDb } from '../../support/sampledb.ts';

const PROMTOOL_TESTS = 'test/monitoring';
const DIST = 'dist/0003-sampledb-monitoring.k8s.yaml';

type Manifest = {
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
};

const distRules = () => {
  const docs = parseAllDocuments(readFileSync(DIST, 'utf8')).map((d) => d.toJS() as Manifest);
  const rule = docs.find((d) => d.kind === 'PrometheusRule');
  assert.ok(rule, `${DIST} has a PrometheusRule`);
  return rule.spec as {
    groups: { name: string; rules: { alert: string; annotations: Record<string, string> }[] }[];
  };
};

function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (result.error) throw new Error(`promtool: ${result.error.message} (run scripts/install-system-deps.sh)`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('SampleDbMonitoring constructs', () => {
  it('synthesizes a ServiceMonitor, a PodMonitor and a PrometheusRule with the given namespace and labels', () => {
    const chart = Testing.chart();
    new SampleDbMonitoring(chart, 'monitoring', { namespace: 'ops', labels: { release: 'prometheus' } });
    const manifests = Testing.synth(chart) as Manifest[];
    assert.deepEqual(
      manifests.map((m) => `${m.kind} ${m.metadata.namespace}/${m.metadata.name}`),
      [
        'ServiceMonitor ops/sampledb-operator-metrics',
        'PodMonitor ops/sampledb-databases',
        'PrometheusRule ops/sampledb-alerts',
      ],
    );
    for (const m of manifests) assert.equal(m.metadata.labels?.release, 'prometheus');
  });

  it('the PodMonitor selects the database pods by their real labels and scrapes the sidecar port', () => {
    const labels = resolveInstance(sampleDb()).labels.database;
    for (const [key, value] of Object.entries(DATABASE_POD_SELECTOR)) assert.equal(labels[key], value, key);
    assert.equal(EXPORTER_PORT_NAME, SIDECAR_PORT_NAME);
  });

  it('SampleDbOperator({ monitoring: true }) adds them in its namespace, the alerts on its metrics job', () => {
    const chart = Testing.chart();
    new SampleDbOperator(chart, 'operator', {
      image: 'x.test/op:1',
      namespace: 'ops',
      name: 'sdb',
      monitoring: true,
    });
    const manifests = (Testing.synth(chart) as Manifest[]).filter(
      (m) => m.metadata.labels?.['app.kubernetes.io/component'] === 'monitoring',
    );
    assert.deepEqual(
      manifests.map((m) => `${m.kind} ${m.metadata.namespace}/${m.metadata.name}`),
      [
        'ServiceMonitor ops/sdb-metrics',
        'PodMonitor ops/sampledb-databases',
        'PrometheusRule ops/sampledb-alerts',
      ],
    );
    assert.match(JSON.stringify(manifests[2]?.spec), /absent\(up\{job=\\"sdb-metrics\\"\} == 1\)/);
    const plain = Testing.chart();
    new SampleDbOperator(plain, 'operator', { image: 'x.test/op:1' });
    assert.ok(
      !(Testing.synth(plain) as Manifest[]).some((m) => m.kind === 'PrometheusRule'),
      'off by default',
    );
  });

  it('dist/ holds the default rules (fresh: the same as the construct makes)', () => {
    assert.deepEqual(distRules().groups, JSON.parse(JSON.stringify(sampleDbAlertGroups())));
  });

  it('thresholds are props', () => {
    const rules = sampleDbAlertGroups({
      storageFullWithinHours: 6,
      backupMaxAgeHours: 8,
      runbookBaseUrl: 'https://x/rb',
    });
    const byName = Object.fromEntries(rules.flatMap((g) => g.rules).map((r) => [r.alert, r]));
    assert.match(byName.SampleDBStorageFillingUp?.expr ?? '', /6 \* 3600/);
    assert.match(byName.SampleDBBackupStale?.expr ?? '', /8 \* 3600/);
    assert.equal(byName.SampleDBBackupMissing?.for, '8h');
    assert.equal(byName.SampleDBNotReady?.annotations?.runbook_url, 'https://x/rb#sampledbnotready');
  });
});

describe('alerts', () => {
  it('every alert has a runbook section in docs/runbooks.md, and its runbook_url points at it', () => {
    const headings = new Set(
      readFileSync('docs/runbooks.md', 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('### '))
        .map((l) => l.slice(4).trim().toLowerCase()),
    );
    for (const group of distRules().groups) {
      for (const rule of group.rules) {
        const anchor = rule.alert.toLowerCase();
        assert.ok(headings.has(anchor), `docs/runbooks.md has no "### ${rule.alert}"`);
        assert.equal(rule.annotations.runbook_url, `docs/runbooks.md#${anchor}`);
      }
    }
  });

  it('the operator metric names the rules use are the ones the operator registers', async () => {
    const registry = new Registry();
    runtimeMetrics(registry);
    registerSampleDbMetrics(registry, () => ({ dbs: [], backups: [] }));
    const registered = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    const exprs = sampleDbAlertGroups().flatMap((g) => g.rules.map((r) => r.expr));
    const used = new Set(
      exprs.flatMap(
        (e) =>
          e.match(
            /\b(sampledb_[a-z_]+|controller_runtime_[a-z_]+|runtime_watch_[a-z_]+|leader_election_[a-z_]+)/g,
          ) ?? [],
      ),
    );
    assert.ok(used.size >= 8, [...used].join(' '));
    for (const name of used) assert.ok(registered.has(name), `${name} is not registered by the operator`);
  });

  describe('promtool', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sampledb-promtool-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const spec = distRules();
    writeFileSync(join(dir, 'rules-full.yaml'), stringify(spec));
    // The unit tests compare runbook_url only: the summary/description templates are checked by `check rules`.
    const compared = structuredClone(spec);
    for (const group of compared.groups)
      for (const rule of group.rules)
        rule.annotations = { runbook_url: rule.annotations.runbook_url as string };
    writeFileSync(join(dir, 'rules.yaml'), stringify(compared));
    const testFiles = readdirSync(PROMTOOL_TESTS).filter((f) => f.endsWith('.promtool.yaml'));
    for (const file of testFiles) cpSync(join(PROMTOOL_TESTS, file), join(dir, file));

    it('`promtool check rules` accepts the synthesized rules', () => {
      const { status, output } = promtool(['check', 'rules', 'rules-full.yaml'], dir);
      assert.equal(status, 0, output);
      assert.match(output, new RegExp(`SUCCESS: ${sampleDbAlertNames().length} rules found`));
    });

    it('there is one promtool test file per alert group, and every alert is expected to fire in one', () => {
      assert.deepEqual(
        testFiles.map((f) => `sampledb.${f.replace('.promtool.yaml', '')}`).sort(),
        spec.groups.map((g) => g.name).sort(),
      );
      const fired = new Set<string>();
      for (const file of testFiles) {
        const suite = parse(readFileSync(join(PROMTOOL_TESTS, file), 'utf8')) as {
          tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
        };
        for (const t of suite.tests)
          for (const a of t.alert_rule_test) if (a.exp_alerts.length > 0) fired.add(a.alertname);
      }
      assert.deepEqual([...fired].sort(), sampleDbAlertNames().sort());
    });

    for (const file of testFiles) {
      it(`\`promtool test rules\` ${file}: alerts fire on broken series, stay quiet on healthy ones`, () => {
        const { status, output } = promtool(['test', 'rules', file], dir);
        assert.equal(status, 0, output);
      });
    }
  });
});

describe('Grafana dashboard', () => {
  it('monitoring/grafana-dashboard.json is what the sources make (npm run synth)', () => {
    assert.equal(
      readFileSync('monitoring/grafana-dashboard.json', 'utf8'),
      `${JSON.stringify(sampleDbDashboard(), null, 2)}\n`,
    );
  });

  it('queries database and operator metrics, through the data source variable, with unique panel ids', () => {
    const dashboard = sampleDbDashboard() as {
      panels: { id: number; type: string; targets?: { datasource: { uid: string } }[] }[];
    };
    const names = dashboardMetricNames();
    assert.ok(
      names.includes('pg_up') && names.includes('controller_runtime_reconcile_total'),
      names.join(' '),
    );
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row'))
      for (const target of panel.targets ?? []) assert.equal(target.datasource.uid, '$' + '{datasource}');
  });
});
