import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { V1Container, V1StatefulSet } from '@kubernetes/client-node';
import { LABELS } from '../../../../src/api/index.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import {
  electionConfigMap,
  failoverSecret,
  readOnlyService,
  replicationSecret,
  statefulSetReplicas,
} from '../../../../src/sampledb/replication/objects.ts';
import {
  REPLICATION_ROLES_SCRIPT,
  replicationRolesJob,
} from '../../../../src/sampledb/replication/roles-job.ts';
import { REPLICATION_START_SCRIPT } from '../../../../src/sampledb/replication/start-script.ts';
import { clientService } from '../../../../src/sampledb/services.ts';
import { statefulSet } from '../../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const three = () => resolveInstance(sampleDb({ instances: 3 }));
const postgresOf = (sts: V1StatefulSet): V1Container => {
  const container = sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres');
  assert.ok(container);
  return container;
};

describe('replicated SampleDB objects', () => {
  it('one instance runs exactly as before: no start script, no election record, the Service selects the pod', () => {
    const one = resolveInstance(sampleDb({}));
    const sts = statefulSet(one);
    assert.equal(sts.spec?.replicas, 1);
    assert.equal(postgresOf(sts).command, undefined);
    assert.ok(!sts.spec?.template.spec?.volumes?.some((v) => v.name === 'election'));
    assert.equal(clientService(one).spec?.selector?.[LABELS.role], undefined);
  });

  it('instances: 3 runs three pods, each with its own volume, started by the election-aware script', () => {
    const sts = statefulSet(three());
    assert.equal(sts.spec?.replicas, 3);
    assert.equal(sts.spec?.volumeClaimTemplates?.length, 1, 'one claim per pod from the template');
    const postgres = postgresOf(sts);
    assert.deepEqual(postgres.command?.slice(0, 2), ['sh', '-c']);
    assert.deepEqual(postgres.args, ['-c', 'config_file=/etc/sampledb/postgresql.conf']);
    const env = Object.fromEntries((postgres.env ?? []).map((e) => [e.name, e]));
    assert.deepEqual(env.SAMPLEDB_REPLICATION_PASSWORD?.valueFrom?.secretKeyRef, {
      name: 'orders-replication',
      key: 'password',
    });
    assert.equal(env.SAMPLEDB_POD?.valueFrom?.fieldRef?.fieldPath, 'metadata.name');
    assert.equal(env.SAMPLEDB_PRIMARY_HOST?.value, 'orders.shop.svc');
    assert.ok(postgres.volumeMounts?.some((m) => m.name === 'election' && m.readOnly));
    const election = sts.spec?.template.spec?.volumes?.find((v) => v.name === 'election');
    assert.equal(election?.configMap?.name, 'orders-election');
    assert.equal(election?.configMap?.optional, undefined, 'a pod waits for the record to exist');
  });

  it('synchronous: n is never part of a server start: the operator sets it once standbys stream', () => {
    // From the first start, the image's bootstrap server waited for ever on its CREATE DATABASE (real node).
    const sync = statefulSet(resolveInstance(sampleDb({ instances: 3, replication: { synchronous: 1 } })));
    const postgres = postgresOf(sync);
    assert.ok(!(postgres.env ?? []).some((e) => /SYNCHRONOUS/.test(e.name)));
    assert.doesNotMatch(REPLICATION_START_SCRIPT, /-c "?synchronous_standby_names/);
    assert.deepEqual(postgres, postgresOf(statefulSet(three())), 'the same container as asynchronous');
  });

  it('the roles Job grants the failover role the one setting it changes and the reload', () => {
    assert.match(REPLICATION_ROLES_SCRIPT, /GRANT ALTER SYSTEM ON PARAMETER synchronous_standby_names TO %I/);
    assert.match(REPLICATION_ROLES_SCRIPT, /GRANT EXECUTE ON FUNCTION pg_catalog.pg_reload_conf\(\) TO %I/);
    assert.doesNotMatch(REPLICATION_ROLES_SCRIPT, /ALTER SYSTEM ON PARAMETER (?!synchronous_standby_names)/);
  });

  it('the client Service selects the primary, -ro the replicas', () => {
    assert.equal(clientService(three()).spec?.selector?.[LABELS.role], 'primary');
    const ro = readOnlyService(three());
    assert.equal(ro.metadata?.name, 'orders-ro');
    assert.equal(ro.spec?.selector?.[LABELS.role], 'replica');
  });

  it('a scale down keeps the pod of the recorded primary until it has been handed over', () => {
    const db = sampleDb({ instances: 2 });
    db.status = { replication: { primary: 'orders-2', term: 3 } };
    assert.equal(statefulSetReplicas(resolveInstance(db)), 3);
    // Elected, not yet promoted: the old primary's pod must come back to say where its WAL ends.
    db.status = {
      replication: {
        primary: 'orders-0',
        term: 4,
        handover: { from: 'orders-2', reason: 'Switchover', lsn: '0/3000060' },
      },
    };
    assert.equal(statefulSetReplicas(resolveInstance(db)), 3);
    db.status = { replication: { primary: 'orders-0', term: 4 } };
    assert.equal(statefulSetReplicas(resolveInstance(db)), 2);
  });

  it('each role has its own generated password, kept once generated', () => {
    const replication = replicationSecret(three());
    const failover = failoverSecret(three());
    const password = (s: typeof replication) => Buffer.from(s.data?.password ?? '', 'base64').toString();
    assert.equal(Buffer.from(replication.data?.username ?? '', 'base64').toString(), 'sampledb_replication');
    assert.equal(Buffer.from(failover.data?.username ?? '', 'base64').toString(), 'sampledb_failover');
    assert.equal(password(replication).length, 40);
    assert.notEqual(password(replication), password(failover));
    assert.equal(password(replicationSecret(three(), replication)), password(replication));
  });

  it('the election ConfigMap holds the primary and the term', () => {
    assert.deepEqual(electionConfigMap(three(), 'orders-1', 4).data, { primary: 'orders-1', term: '4' });
  });

  it('the roles Job reads both passwords from their Secrets, never from its spec', () => {
    const job = replicationRolesJob(three(), ['a', 'b']);
    const container = job.spec?.template.spec?.containers[0];
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e]));
    // Pod 0 directly: the client Service selects the primary only once these roles let the operator ask it.
    assert.equal(env.PGHOST?.value, 'orders-0.orders-headless.shop.svc');
    assert.equal(env.SAMPLEDB_REPLICATION_PASSWORD?.valueFrom?.secretKeyRef?.name, 'orders-replication');
    assert.equal(env.SAMPLEDB_FAILOVER_PASSWORD?.valueFrom?.secretKeyRef?.name, 'orders-failover');
    assert.ok((container?.env ?? []).every((e) => e.value === undefined || !/PASSWORD/.test(e.name)));
  });

  it('the scripts are valid POSIX sh', () => {
    for (const script of [REPLICATION_START_SCRIPT, REPLICATION_ROLES_SCRIPT]) {
      const check = spawnSync('sh', ['-n'], { input: script, encoding: 'utf8' });
      assert.equal(check.status, 0, check.stderr);
    }
  });
});
