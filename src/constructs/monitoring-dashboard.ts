// The Grafana dashboard shipped as monitoring/grafana-dashboard.json (written by `npm run synth`). Its panels use
// only metric names the monitoring integration test saw a real operator and a real postgres_exporter export.
export const DASHBOARD_UID = 'sampledb-operator';

interface Target {
  readonly expr: string;
  readonly legendFormat: string;
}

interface Panel {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly targets: readonly Target[];
  readonly kind?: 'timeseries' | 'stat';
}

const DB = 'namespace=~"$namespace", sampledb=~"$sampledb"';

const DATABASE_PANELS: readonly Panel[] = [
  {
    title: 'Up',
    description: 'pg_up: 1 when the exporter can query PostgreSQL.',
    unit: 'none',
    kind: 'stat',
    targets: [
      { expr: `min by (namespace, sampledb) (pg_up{${DB}})`, legendFormat: '{{namespace}}/{{sampledb}}' },
    ],
  },
  {
    title: 'Connections',
    description: 'Backends per database, against max_connections.',
    unit: 'none',
    targets: [
      {
        expr: `sum by (namespace, sampledb) (pg_stat_database_numbackends{${DB}})`,
        legendFormat: '{{namespace}}/{{sampledb}}',
      },
      {
        expr: `max by (namespace, sampledb) (pg_settings_max_connections{${DB}})`,
        legendFormat: '{{namespace}}/{{sampledb}} max',
      },
    ],
  },
  {
    title: 'Transactions',
    description: 'Commits and rollbacks per second.',
    unit: 'ops',
    targets: [
      {
        expr: `sum by (namespace, sampledb) (rate(pg_stat_database_xact_commit{${DB}}[5m]))`,
        legendFormat: '{{namespace}}/{{sampledb}} commit',
      },
      {
        expr: `sum by (namespace, sampledb) (rate(pg_stat_database_xact_rollback{${DB}}[5m]))`,
        legendFormat: '{{namespace}}/{{sampledb}} rollback',
      },
    ],
  },
  {
    title: 'Cache hit ratio',
    description: 'Share of block reads served from shared buffers.',
    unit: 'percentunit',
    targets: [
      {
        expr: `sum by (namespace, sampledb) (rate(pg_stat_database_blks_hit{${DB}}[5m])) / (sum by (namespace, sampledb) (rate(pg_stat_database_blks_hit{${DB}}[5m])) + sum by (namespace, sampledb) (rate(pg_stat_database_blks_read{${DB}}[5m])))`,
        legendFormat: '{{namespace}}/{{sampledb}}',
      },
    ],
  },
  {
    title: 'Database size',
    description: 'pg_database_size_bytes per database.',
    unit: 'bytes',
    targets: [
      {
        expr: `pg_database_size_bytes{${DB}, datname!~"template.*"}`,
        legendFormat: '{{namespace}}/{{sampledb}} {{datname}}',
      },
    ],
  },
  {
    title: 'Deadlocks',
    description: 'Deadlocks per second.',
    unit: 'ops',
    targets: [
      {
        expr: `sum by (namespace, sampledb) (rate(pg_stat_database_deadlocks{${DB}}[5m]))`,
        legendFormat: '{{namespace}}/{{sampledb}}',
      },
    ],
  },
];

const OPERATOR_PANELS: readonly Panel[] = [
  {
    title: 'SampleDB phases',
    description: 'How many SampleDBs are in each phase (sampledb_status_phase).',
    unit: 'none',
    targets: [
      {
        expr: 'sum by (phase) (max by (namespace, sampledb, phase) (sampledb_status_phase{namespace=~"$namespace"}))',
        legendFormat: '{{phase}}',
      },
    ],
  },
  {
    title: 'SampleDBs not Ready',
    description: 'SampleDBs whose Ready condition is not True.',
    unit: 'none',
    kind: 'stat',
    targets: [
      {
        expr: 'count(max by (namespace, sampledb) (sampledb_status_condition{namespace=~"$namespace", type="Ready", status="True"}) == 0) or vector(0)',
        legendFormat: 'not Ready',
      },
    ],
  },
  {
    title: 'Reconciles',
    description: 'Reconciles per second by controller and result.',
    unit: 'ops',
    targets: [
      {
        expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total[5m]))',
        legendFormat: '{{controller}} {{result}}',
      },
    ],
  },
  {
    title: 'Reconcile time (p95)',
    description: '95th percentile of the time one reconcile takes.',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.95, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[5m])))',
        legendFormat: '{{controller}}',
      },
    ],
  },
  {
    title: 'Work queue depth',
    description: 'Items waiting to be reconciled.',
    unit: 'none',
    targets: [{ expr: 'sum by (name) (workqueue_depth)', legendFormat: '{{name}}' }],
  },
  {
    title: 'API requests',
    description: 'Requests of the operator to the apiserver per second, by code.',
    unit: 'reqps',
    targets: [{ expr: 'sum by (code) (rate(rest_client_requests_total[5m]))', legendFormat: '{{code}}' }],
  },
];

// Grafana's own variable syntax, not a JavaScript template: every query goes to the data source the user picks.
const DATASOURCE = { type: 'prometheus', uid: '$' + '{datasource}' } as const;

const WIDTH = 8;
const HEIGHT = 7;

function panelsOf(panels: readonly Panel[], firstId: number, top: number) {
  return panels.map((p, i) => ({
    id: firstId + i,
    type: p.kind ?? 'timeseries',
    title: p.title,
    description: p.description,
    datasource: DATASOURCE,
    gridPos: { x: (i % 3) * WIDTH, y: top + Math.floor(i / 3) * HEIGHT, w: WIDTH, h: HEIGHT },
    fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
    options: {},
    targets: p.targets.map((t, j) => ({
      refId: String.fromCharCode(65 + j),
      datasource: DATASOURCE,
      expr: t.expr,
      legendFormat: t.legendFormat,
    })),
  }));
}

const row = (id: number, title: string, y: number) => ({
  id,
  type: 'row',
  title,
  collapsed: false,
  gridPos: { x: 0, y, w: 24, h: 1 },
  panels: [],
});

const variable = (name: string, query: string) => ({
  name,
  label: name,
  type: 'query',
  datasource: DATASOURCE,
  query: { query, refId: name },
  definition: query,
  includeAll: true,
  multi: true,
  allValue: '.*',
  current: { text: 'All', value: '$__all' },
  refresh: 2,
  sort: 1,
});

/** The dashboard model (Grafana's JSON, schemaVersion 39). */
export function sampleDbDashboard(): Record<string, unknown> {
  const dbRows = Math.ceil(DATABASE_PANELS.length / 3) * HEIGHT;
  return {
    uid: DASHBOARD_UID,
    title: 'SampleDB',
    description: 'SampleDB databases (postgres_exporter sidecars) and the SampleDB operator.',
    tags: ['sampledb', 'postgresql', 'operator'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' },
        variable('namespace', 'label_values(sampledb_status_phase, namespace)'),
        variable('sampledb', 'label_values(pg_up{namespace=~"$namespace"}, sampledb)'),
      ],
    },
    panels: [
      row(1, 'Databases', 0),
      ...panelsOf(DATABASE_PANELS, 10, 1),
      row(2, 'Operator', 1 + dbRows),
      ...panelsOf(OPERATOR_PANELS, 30, 2 + dbRows),
    ],
  };
}

/** Every metric name a panel or variable queries (histogram series by their `_bucket` name). */
export function dashboardMetricNames(dashboard: Record<string, unknown> = sampleDbDashboard()): string[] {
  const text = JSON.stringify(dashboard);
  const names =
    text.match(
      /\b(?:pg|sampledb|controller_runtime|workqueue|rest_client|leader_election|runtime_watch)_[a-z_]+\b/g,
    ) ?? [];
  return [...new Set(names)].sort();
}
