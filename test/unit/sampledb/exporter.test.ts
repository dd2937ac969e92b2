import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_EXPORTER_IMAGE, sampleDbValidator } from '../../../src/api/index.ts';
import {
  EXPORTER_CONTAINER,
  EXPORTER_PORT,
  MONITORING_PASSWORD_ENV,
  MONITORING_ROLE,
  monitoringSecret,
} from '../../../src/sampledb/exporter.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { monitoringRoleJob } from '../../../src/sampledb/monitoring-role-job.ts';
import {
  MONITORING_ROLE_SCRIPT,
  MONITORING_ROLE_SECRET_ENV,
} from '../../../src/sampledb/scripts/monitoring-role.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../support/sampledb.ts';

const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
const monitored = (image?: string) =>
  sampleDb({ monitoring: { exporter: { enabled: true, ...(image ? { image } : {}) } } });
const containersOf = (db: ReturnType<typeof sampleDb>) =>
  statefulSet(resolveInstance(db)).spec?.template.spec?.containers ?? [];

describe('postgres_exporter sidecar', () => {
  it('is absent unless monitoring.exporter.enabled', () => {
    assert.deepEqual(
      containersOf(sampleDb()).map((c) => c.name),
      ['postgres'],
    );
    assert.deepEqual(
      containersOf(sampleDb({ monitoring: { exporter: { enabled: false } } })).map((c) => c.name),
      ['postgres'],
    );
  });

  it('runs the default image on port 9187 named "metrics", or the image given', () => {
    const [, exporter] = containersOf(monitored());
    assert.equal(exporter?.name, EXPORTER_CONTAINER);
    assert.equal(exporter?.image, DEFAULT_EXPORTER_IMAGE);
    assert.deepEqual(exporter?.ports, [{ name: 'metrics', containerPort: EXPORTER_PORT, protocol: 'TCP' }]);
    assert.equal(
      containersOf(monitored('registry.example/exporter:1'))[1]?.image,
      'registry.example/exporter:1',
    );
  });

  it('logs in as the monitoring role with credentials from the monitoring Secret only, never literal', () => {
    const [, exporter] = containersOf(monitored());
    const env = Object.fromEntries((exporter?.env ?? []).map((e) => [e.name, e]));
    assert.deepEqual(env.DATA_SOURCE_USER?.valueFrom?.secretKeyRef, {
      name: 'orders-monitoring',
      key: 'username',
    });
    assert.deepEqual(env.DATA_SOURCE_PASS?.valueFrom?.secretKeyRef, {
      name: 'orders-monitoring',
      key: 'password',
    });
    assert.equal(env.DATA_SOURCE_URI?.value, '127.0.0.1:5432/postgres?sslmode=disable');
    // Nothing of the superuser's Secret reaches the sidecar.
    assert.ok(!JSON.stringify(exporter).includes('orders-credentials'));
  });

  it('keeps the pod within PodSecurity restricted and never gates the database readiness', () => {
    const spec = statefulSet(resolveInstance(monitored())).spec?.template.spec;
    assert.ok(spec);
    assert.deepEqual(restrictedPodSpecViolations(spec), []);
    assert.equal(spec.containers[1]?.readinessProbe, undefined);
  });

  it('is accepted by the validator with and without an image, and refuses what is no image reference', () => {
    assert.deepEqual(sampleDbValidator.validate(monitored()), []);
    assert.deepEqual(sampleDbValidator.validate(monitored('registry.example/exporter:1')), []);
    for (const image of ['', 'Registry.Example/Exporter:1', 'exporter:bad tag']) {
      const bad = sampleDbValidator.validate(
        sampleDb({ monitoring: { exporter: { enabled: true, image } } }),
      );
      assert.ok(bad.length > 0, `"${image}" is refused`);
      assert.deepEqual([...new Set(bad.map((e) => e.field))], ['spec.monitoring.exporter.image']);
    }
  });
});

describe('monitoring Secret', () => {
  it('is generated only with the exporter: username sampledb_monitor, a 40-character CSPRNG password', () => {
    assert.equal(monitoringSecret(resolveInstance(sampleDb()), undefined), undefined);
    const calls: number[] = [];
    const secret = monitoringSecret(resolveInstance(monitored()), undefined, (max) => {
      calls.push(max);
      return 1;
    });
    assert.equal(secret?.metadata?.name, 'orders-monitoring');
    assert.equal(decode(secret?.data?.username), MONITORING_ROLE);
    assert.equal(decode(secret?.data?.password), 'B'.repeat(40));
    assert.equal(calls.length, 40);
    assert.equal(secret?.metadata?.ownerReferences?.[0]?.kind, 'SampleDB');
  });

  it('keeps the password already in the cluster', () => {
    const existing = { data: { username: 'x', password: Buffer.from('kept').toString('base64') } };
    assert.equal(decode(monitoringSecret(resolveInstance(monitored()), existing)?.data?.password), 'kept');
  });
});

describe('monitoring role Job', () => {
  const job = (db = monitored(), uid = 'uid-1') => monitoringRoleJob(resolveInstance(db), uid);

  it('runs the role script with the database image as the superuser, the password from the monitoring Secret', () => {
    const container = job().spec?.template.spec?.containers[0];
    assert.equal(container?.image, 'docker.io/library/postgres:16');
    assert.deepEqual(container?.command, ['sh', '-c', MONITORING_ROLE_SCRIPT]);
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e]));
    assert.deepEqual(env[MONITORING_PASSWORD_ENV]?.valueFrom?.secretKeyRef, {
      name: 'orders-monitoring',
      key: 'password',
    });
    assert.deepEqual(env.PGPASSWORD?.valueFrom?.secretKeyRef, {
      name: 'orders-superuser',
      key: 'password',
    });
    assert.equal(env.SAMPLEDB_MONITOR_ROLE?.value, MONITORING_ROLE);
    for (const name of MONITORING_ROLE_SECRET_ENV)
      assert.equal(env[name]?.value, undefined, `${name} is not literal`);
    assert.deepEqual(restrictedPodSpecViolations(job().spec?.template.spec ?? { containers: [] }), []);
  });

  it('is named after the Secret it applies: a new Secret, a new Job; names fit in 63 characters', () => {
    assert.equal(job().metadata?.name, job(monitored(), 'uid-1').metadata?.name);
    assert.notEqual(job().metadata?.name, job(monitored(), 'uid-2').metadata?.name);
    const long = sampleDb({ monitoring: { exporter: { enabled: true } } }, { name: 'a'.repeat(52) });
    assert.ok((job(long).metadata?.name ?? '').length <= 63);
  });

  it('the script grants pg_monitor, strips every other attribute, and reads the password from the environment', () => {
    assert.match(MONITORING_ROLE_SCRIPT, /GRANT pg_monitor TO %I/);
    assert.match(MONITORING_ROLE_SCRIPT, /NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS/);
    assert.match(MONITORING_ROLE_SCRIPT, /printenv SAMPLEDB_MONITOR_PASSWORD/);
  });
});
