import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, resolveSampleDbSpec } from '../../../src/api/index.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { postgresConfig, postgresConfigMap } from '../../../src/sampledb/postgres-config.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

const configOf = (spec: Parameters<typeof sampleDb>[0]) =>
  postgresConfig(resolveSampleDbSpec(sampleDb(spec).spec));

describe('postgresConfig', () => {
  it('derives memory settings from the memory limit', () => {
    const { settings } = configOf({ resources: { limits: { memory: '4Gi' } } });
    assert.equal(settings.shared_buffers, '1024MB');
    assert.equal(settings.effective_cache_size, '3072MB');
    assert.equal(settings.maintenance_work_mem, '256MB');
    assert.equal(settings.max_connections, '100');
    // (4Gi - 1Gi) / (4 × 100)
    assert.equal(settings.work_mem, '7MB');
  });

  it('uses the default 1Gi limit when the spec gives no resources, and keeps floors', () => {
    const { settings } = configOf({});
    assert.equal(settings.shared_buffers, '256MB');
    assert.equal(settings.effective_cache_size, '768MB');
    assert.equal(settings.work_mem, '4MB');
    assert.equal(settings.maintenance_work_mem, '64MB');
  });

  it('lets user parameters override derived ones, and recomputes work_mem for their max_connections', () => {
    const { settings } = configOf({
      resources: { limits: { memory: '4Gi' } },
      postgresql: {
        parameters: { shared_buffers: '512MB', max_connections: '20', log_min_duration_statement: '250' },
      },
    });
    assert.equal(settings.shared_buffers, '512MB');
    assert.equal(settings.max_connections, '20');
    assert.equal(settings.log_min_duration_statement, '250');
    assert.equal(settings.work_mem, '38MB');
  });

  it('keeps operator-owned settings and rejects unsafe parameters, saying why', () => {
    const config = configOf({
      postgresql: { parameters: { port: '1234', 'bad name': 'x', search_path: "a\nport = '1'" } },
    });
    assert.equal(config.settings.port, '5432');
    assert.equal(config.settings.search_path, undefined);
    assert.deepEqual(config.rejected.map((r) => r.name).sort(), ['bad name', 'port', 'search_path']);
    assert.equal(config.text.split('\n').filter((line) => line.startsWith('port')).length, 1);
  });

  it('renders postgresql.conf sorted and quoted, including initdb defaults first', () => {
    const { text } = configOf({ postgresql: { parameters: { application_name: "it's" } } });
    const lines = text.trimEnd().split('\n');
    assert.match(
      lines[1] ?? '',
      /^include_if_exists = '\/var\/lib\/postgresql\/data\/pgdata\/postgresql.conf'$/,
    );
    const settings = lines.slice(2);
    const keys = settings.map((line) => line.split(' = ')[0] ?? '');
    assert.deepEqual(keys, [...keys].sort());
    assert.ok(settings.includes("application_name = 'it''s'"));
    assert.ok(settings.includes("listen_addresses = '*'"));
  });

  it('renders the same text whatever the order the parameters were written in', () => {
    const a = configOf({ postgresql: { parameters: { a_setting: '1', b_setting: '2' } } });
    const b = configOf({ postgresql: { parameters: { b_setting: '2', a_setting: '1' } } });
    assert.equal(a.text, b.text);
    assert.equal(a.hash, b.hash);
  });
});

describe('config hash', () => {
  const hashOf = (db: ReturnType<typeof sampleDb>) =>
    statefulSet(resolveInstance(db)).spec?.template.metadata?.annotations?.[ANNOTATIONS.configHash];

  it('is on the pod template and matches the ConfigMap content', () => {
    const db = sampleDb();
    assert.equal(hashOf(db), postgresConfig(resolveSampleDbSpec(db.spec)).hash);
    assert.equal(
      postgresConfigMap(resolveInstance(db)).data?.['postgresql.conf'],
      postgresConfig(resolveSampleDbSpec(db.spec)).text,
    );
  });

  it('changes when a setting changes: a parameter or the memory it is derived from', () => {
    const base = hashOf(sampleDb());
    assert.notEqual(hashOf(sampleDb({ postgresql: { parameters: { work_mem: '64MB' } } })), base);
    assert.notEqual(hashOf(sampleDb({ resources: { limits: { memory: '2Gi' } } })), base);
  });

  it('does not change for edits that do not touch the settings', () => {
    const base = hashOf(sampleDb());
    assert.equal(hashOf(sampleDb({ storage: { size: '50Gi' } })), base);
    assert.equal(hashOf(sampleDb({ service: { type: 'NodePort' } })), base);
    assert.equal(hashOf(sampleDb({ resources: { limits: { memory: '1Gi', cpu: '2' } } })), base);
  });
});
