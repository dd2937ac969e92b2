import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import type { SampleDbSpec } from '../../../src/api/index.ts';
import { SampleDb, SampleDbBackup, SampleDbCrds, ValidationError } from '../../../src/index.ts';
import { INVALID_CREATES } from '../../support/invalid-sampledbs.ts';

describe('SampleDb construct', () => {
  it('emits a SampleDB with the given metadata and spec', () => {
    const chart = Testing.chart();
    new SampleDb(chart, 'orders', {
      namespace: 'shop',
      labels: { team: 'checkout' },
      spec: { version: '16', storage: { size: '5Gi' }, deletion: { policy: 'Retain' } },
    });
    const [object] = Testing.synth(chart);
    assert.deepEqual(object, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'orders', namespace: 'shop', labels: { team: 'checkout' } },
      spec: { version: '16', storage: { size: '5Gi' }, deletion: { policy: 'Retain' } },
    });
  });

  it('tells what clients connect to, as the Pulumi SampleDb and the SampleDB status.endpoint do', () => {
    const chart = Testing.chart();
    const orders = new SampleDb(chart, 'orders', {
      namespace: 'shop',
      spec: { version: '16', storage: { size: '5Gi' } },
    });
    assert.deepEqual(
      {
        host: orders.host,
        port: orders.port,
        bindingSecretName: orders.bindingSecretName,
        connectionConfigMapName: orders.connectionConfigMapName,
      },
      {
        host: 'orders.shop.svc',
        port: 5432,
        bindingSecretName: 'orders-binding',
        connectionConfigMapName: 'orders-connection',
      },
    );
    const custom = new SampleDb(chart, 'cart', {
      name: 'cart-db',
      spec: { version: '16', storage: { size: '5Gi' }, service: { port: 6543 } },
    });
    assert.equal(custom.host, undefined, 'no namespace: the host depends on where the manifest is applied');
    assert.equal(custom.port, 6543);
    assert.equal(custom.bindingSecretName, 'cart-db-binding');
  });

  for (const invalid of INVALID_CREATES) {
    it(`fails at synth time naming ${invalid.field} (${invalid.title})`, () => {
      const chart = Testing.chart();
      assert.throws(
        () => new SampleDb(chart, 'db', { name: invalid.name ?? 'db', spec: invalid.spec as SampleDbSpec }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.errors.some((e) => e.field === invalid.field) &&
          error.message.includes(invalid.field),
      );
    });
  }
});

describe('SampleDbBackup construct', () => {
  it('emits a backup of the named SampleDB and refuses an empty reference', () => {
    const chart = Testing.chart();
    new SampleDbBackup(chart, 'before-migration', {
      namespace: 'shop',
      spec: { sampleDB: { name: 'orders' } },
    });
    assert.deepEqual(Testing.synth(chart)[0]?.spec, { sampleDB: { name: 'orders' } });
    assert.throws(
      () => new SampleDbBackup(Testing.chart(), 'bad', { spec: { sampleDB: { name: '' } } }),
      /spec\.sampleDB\.name/,
    );
  });
});

describe('SampleDbCrds construct', () => {
  it('emits the CRDs with status subresource, short names and printer columns', () => {
    const chart = Testing.chart();
    new SampleDbCrds(chart, 'crds');
    const crds = Testing.synth(chart) as Array<{
      metadata: { name: string };
      spec: {
        names: { shortNames: string[]; categories: string[] };
        versions: Array<{ subresources: object; additionalPrinterColumns: Array<{ name: string }> }>;
      };
    }>;
    assert.deepEqual(
      crds.map((c) => c.metadata.name),
      [
        'sampledbs.sampledb.io',
        'sampledbbackups.sampledb.io',
        'sampledbrestores.sampledb.io',
        'sampledbdrills.sampledb.io',
      ],
    );
    const [sampledb, backup, restore, drill] = crds;
    assert.deepEqual(restore?.spec.names.shortNames, ['sdbrestore']);
    assert.deepEqual(drill?.spec.names.shortNames, ['sdbdrill']);
    assert.deepEqual(
      drill?.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name),
      [
        'SampleDB',
        'Kind',
        'Phase',
        'Last Result',
        'Writable Seconds',
        'Detect Seconds',
        'Schedule',
        'Message',
        'Age',
      ],
    );
    assert.deepEqual(sampledb?.spec.names.shortNames, ['sdb']);
    assert.deepEqual(backup?.spec.names.shortNames, ['sdbbackup']);
    assert.deepEqual(sampledb?.spec.names.categories, ['sampledb-operator', 'all']);
    assert.deepEqual(sampledb?.spec.versions[0]?.subresources, { status: {} });
    assert.deepEqual(
      sampledb?.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name),
      ['Ready', 'Version', 'Phase', 'Endpoint', 'Last Backup', 'Age'],
    );
  });
});
