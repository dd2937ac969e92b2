import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_NAME_LENGTH, OPERATOR_SECRET_SUFFIXES } from '../../../src/api/index.ts';
import type { SampleDbInstance } from '../../../src/sampledb/instance.ts';
import { backupDumpPath, backupJobName, boundedName, namesFor } from '../../../src/sampledb/names.ts';
import { replicationNames } from '../../../src/sampledb/replication/objects.ts';

describe('namesFor', () => {
  it('derives every child name from the SampleDB name', () => {
    assert.deepEqual(namesFor('orders'), {
      statefulSet: 'orders',
      headlessService: 'orders-headless',
      clientService: 'orders',
      generatedCredentialsSecret: 'orders-credentials',
      superuserSecret: 'orders-superuser',
      monitoringSecret: 'orders-monitoring',
      connectionConfigMap: 'orders-connection',
      bindingSecret: 'orders-binding',
      configConfigMap: 'orders-config',
      initJob: 'orders-init',
      backupPvc: 'orders-backups',
      dataVolumeClaimTemplate: 'data',
      dataPvc: 'data-orders-0',
      pod: 'orders-0',
    });
  });

  it("the Secrets the operator writes are exactly the names admission keeps from a user's credentialsSecret", () => {
    const names = namesFor('orders');
    const replication = replicationNames({ name: 'orders' } as SampleDbInstance);
    const written = [
      names.superuserSecret,
      names.monitoringSecret,
      names.bindingSecret,
      replication.replicationSecret,
      replication.failoverSecret,
    ];
    assert.deepEqual(written.sort(), OPERATOR_SECRET_SUFFIXES.map((s) => `orders-${s}`).sort());
  });

  it('keeps Service, Job and pod names within 63 characters for the longest allowed SampleDB name', () => {
    const names = namesFor('a'.repeat(MAX_NAME_LENGTH));
    for (const key of ['statefulSet', 'headlessService', 'clientService', 'initJob', 'pod'] as const) {
      assert.ok(names[key].length <= 63, `${key} is ${names[key].length} characters`);
    }
  });
});

describe('boundedName', () => {
  it('appends the suffix when it fits', () => {
    assert.equal(boundedName('nightly', 'backup'), 'nightly-backup');
  });

  it('cuts long names to 63 characters and keeps distinct names distinct', () => {
    const a = backupJobName(`${'x'.repeat(100)}-a`);
    const b = backupJobName(`${'x'.repeat(100)}-b`);
    assert.equal(a.length <= 63, true);
    assert.equal(b.length <= 63, true);
    assert.notEqual(a, b);
    assert.match(a, /^x+-[0-9a-f]{8}-backup$/);
  });
});

describe('backupDumpPath', () => {
  it('puts a backup under its SampleDB directory', () => {
    assert.equal(backupDumpPath('orders', 'nightly-1'), 'orders/nightly-1.dump');
  });
});
