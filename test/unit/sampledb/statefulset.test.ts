import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container, V1StatefulSet } from '@kubernetes/client-node';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

const postgresOf = (sts: V1StatefulSet): V1Container => {
  const container = sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres');
  assert.ok(container);
  return container;
};
const envOf = (container: V1Container) => Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));

describe('statefulSet', () => {
  it('runs one replica of the image for spec.version', () => {
    const sts = statefulSet(resolveInstance(sampleDb({ version: '16.4' })));
    assert.equal(sts.spec?.replicas, 1);
    assert.equal(postgresOf(sts).image, 'docker.io/library/postgres:16.4');
    assert.equal(
      postgresOf(statefulSet(resolveInstance(sampleDb({ image: 'registry.local/pg:16' })))).image,
      'registry.local/pg:16',
    );
  });

  it("takes the superuser credentials from the superuser Secret (not the owner's) and PGDATA under the data mount", () => {
    const container = postgresOf(
      statefulSet(resolveInstance(sampleDb({ bootstrap: { database: 'orders' } }))),
    );
    const env = envOf(container);
    assert.deepEqual(env.POSTGRES_USER?.valueFrom?.secretKeyRef, {
      name: 'orders-superuser',
      key: 'username',
    });
    assert.deepEqual(env.POSTGRES_PASSWORD?.valueFrom?.secretKeyRef, {
      name: 'orders-superuser',
      key: 'password',
    });
    assert.equal(env.POSTGRES_DB?.value, 'orders');
    const dataMount = container.volumeMounts?.find((m) => m.name === 'data');
    assert.ok(dataMount && env.PGDATA?.value?.startsWith(`${dataMount.mountPath}/`));
  });

  it('never makes a user-supplied (owner) credentials Secret the superuser', () => {
    const env = envOf(
      postgresOf(
        statefulSet(resolveInstance(sampleDb({ bootstrap: { credentialsSecret: { name: 'mine' } } }))),
      ),
    );
    assert.equal(env.POSTGRES_USER?.valueFrom?.secretKeyRef?.name, 'orders-superuser');
    assert.equal(env.POSTGRES_PASSWORD?.valueFrom?.secretKeyRef?.name, 'orders-superuser');
  });

  it('claims the data volume from spec.storage and keeps it when the StatefulSet goes', () => {
    const sts = statefulSet(
      resolveInstance(sampleDb({ storage: { size: '20Gi', storageClassName: 'fast' } })),
    );
    const template = sts.spec?.volumeClaimTemplates?.[0];
    assert.equal(template?.metadata?.name, 'data');
    assert.equal(template?.spec?.resources?.requests?.storage, '20Gi');
    assert.equal(template?.spec?.storageClassName, 'fast');
    assert.deepEqual(sts.spec?.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: 'Retain',
      whenScaled: 'Retain',
    });
    assert.equal(
      statefulSet(resolveInstance(sampleDb())).spec?.volumeClaimTemplates?.[0]?.spec?.storageClassName,
      undefined,
    );
  });

  it('mounts postgresql.conf and points the server at it', () => {
    const sts = statefulSet(resolveInstance(sampleDb()));
    const container = postgresOf(sts);
    assert.deepEqual(container.args, ['-c', 'config_file=/etc/sampledb/postgresql.conf']);
    const configVolume = sts.spec?.template.spec?.volumes?.find((v) => v.name === 'config');
    assert.equal(configVolume?.configMap?.name, 'orders-config');
    assert.ok(
      container.volumeMounts?.some(
        (m) => m.name === 'config' && m.mountPath === '/etc/sampledb' && m.readOnly,
      ),
    );
  });

  it('gives the read-only root filesystem writable emptyDirs for the socket and /tmp', () => {
    const sts = statefulSet(resolveInstance(sampleDb()));
    const volumes = new Map((sts.spec?.template.spec?.volumes ?? []).map((v) => [v.name, v]));
    for (const path of ['/var/run/postgresql', '/tmp']) {
      const mount = postgresOf(sts).volumeMounts?.find((m) => m.mountPath === path);
      assert.ok(mount, `nothing mounted at ${path}`);
      assert.ok(volumes.get(mount.name)?.emptyDir, `${path} is not an emptyDir`);
    }
  });

  it('probes with pg_isready over loopback TCP', () => {
    const container = postgresOf(statefulSet(resolveInstance(sampleDb())));
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      const script = probe?.exec?.command?.join(' ') ?? '';
      assert.match(script, /pg_isready .*-h 127\.0\.0\.1 -p 5432/);
    }
    // Alive while starting up or shutting down (exit 1); dead only without any answer (exit 2).
    assert.match(container.livenessProbe?.exec?.command?.at(-1) ?? '', /\[ \$\? -ne 2 \]$/);
    assert.ok(
      (container.startupProbe?.failureThreshold ?? 0) * (container.startupProbe?.periodSeconds ?? 0) >= 600,
    );
  });

  it('takes resources from the resolved spec', () => {
    const container = postgresOf(
      statefulSet(
        resolveInstance(
          sampleDb({ resources: { requests: { cpu: '1', memory: '2Gi' }, limits: { memory: '4Gi' } } }),
        ),
      ),
    );
    assert.deepEqual(container.resources, {
      requests: { cpu: '1', memory: '2Gi' },
      limits: { memory: '4Gi' },
    });
    assert.deepEqual(postgresOf(statefulSet(resolveInstance(sampleDb()))).resources, {
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { memory: '1Gi' },
    });
  });

  it('shuts PostgreSQL down fast within the grace period', () => {
    const sts = statefulSet(resolveInstance(sampleDb()));
    const grace = sts.spec?.template.spec?.terminationGracePeriodSeconds ?? 30;
    const preStop = postgresOf(sts).lifecycle?.preStop?.exec?.command?.join(' ') ?? '';
    assert.match(preStop, /pg_ctl stop .*-m fast/);
    const timeout = Number(/-t (\d+)/.exec(preStop)?.[1]);
    assert.ok(timeout < grace, `pg_ctl waits ${timeout}s, grace period is ${grace}s`);
  });

  it('selects its pods by labels the pod template carries', () => {
    const sts = statefulSet(resolveInstance(sampleDb()));
    const labels = sts.spec?.template.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(sts.spec?.selector.matchLabels ?? {}))
      assert.equal(labels[key], value);
  });
});
