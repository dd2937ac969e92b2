import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { allCrds } from '../../../src/api/crd.ts';
import { SampleDb, SampleDbOperator } from '../../../src/deploy/index.ts';
import { resolveDeep, runWithMocks } from './pulumi-mocks.ts';

const IMAGE = `ghcr.io/acme/sampledb-operator@sha256:${'cd'.repeat(32)}`;

describe('SampleDbOperator component', () => {
  test('exposes namespace, Deployment, image, digest, ServiceAccount, metrics Service and CRD names', async () => {
    const { result, resources } = await runWithMocks({}, () => {
      const operator = new SampleDbOperator('ops', { image: IMAGE, namespace: 'platform', replicas: 1 });
      return {
        namespace: operator.namespace,
        deploymentName: operator.deploymentName,
        image: operator.image,
        imageDigest: operator.imageDigest,
        serviceAccountName: operator.serviceAccountName,
        metricsServiceName: operator.metricsServiceName,
        crdNames: operator.crdNames,
      };
    });
    assert.deepEqual(await resolveDeep(result), {
      namespace: 'platform',
      deploymentName: 'sampledb-operator',
      image: IMAGE,
      imageDigest: `sha256:${'cd'.repeat(32)}`,
      serviceAccountName: 'sampledb-operator',
      metricsServiceName: 'sampledb-operator-metrics',
      crdNames: allCrds().map((crd) => crd.metadata.name),
    });
    const children = resources.filter((r) => r.name.startsWith('ops/'));
    assert.ok(children.length > 10);
    assert.ok(children.every((r) => r.type.startsWith('kubernetes:')));
  });

  test('installCrds: false leaves the CRDs to someone else', async () => {
    const { result, resources } = await runWithMocks({}, () => {
      const operator = new SampleDbOperator('ops', { image: IMAGE, installCrds: false });
      return { crdNames: operator.crdNames };
    });
    assert.deepEqual(await resolveDeep(result), { crdNames: [] });
    assert.equal(resources.filter((r) => r.type.endsWith(':CustomResourceDefinition')).length, 0);
  });

  test('refuses an image that is not pinned by digest, unless told otherwise', async () => {
    await assert.rejects(
      runWithMocks({}, () => new SampleDbOperator('ops', { image: 'ghcr.io/acme/op:latest' })),
      /image must be pinned by digest/,
    );
    const { result } = await runWithMocks({}, () => {
      const operator = new SampleDbOperator('ops', {
        image: 'ghcr.io/acme/op:dev',
        allowUnpinnedImage: true,
      });
      return { image: operator.image, imageDigest: operator.imageDigest };
    });
    assert.deepEqual(await resolveDeep(result), { image: 'ghcr.io/acme/op:dev', imageDigest: '' });
  });
});

describe('SampleDb component', () => {
  test('creates the SampleDB after what it depends on and exposes its endpoint, not its credentials', async () => {
    const { result, resources } = await runWithMocks({}, () => {
      const operator = new SampleDbOperator('ops', { image: IMAGE });
      const db = new SampleDb(
        'orders',
        { namespace: 'shop', spec: { version: '16', storage: { size: '1Gi' }, service: { port: 6432 } } },
        { dependsOn: [operator] },
      );
      return {
        name: db.name,
        namespace: db.namespace,
        host: db.host,
        port: db.port,
        bindingSecretName: db.bindingSecretName,
        connectionConfigMapName: db.connectionConfigMapName,
      };
    });
    assert.deepEqual(await resolveDeep(result), {
      name: 'orders',
      namespace: 'shop',
      host: 'orders.shop.svc',
      port: 6432,
      bindingSecretName: 'orders-binding',
      connectionConfigMapName: 'orders-connection',
    });
    const sampleDb = resources.find((r) => r.type === 'kubernetes:sampledb.io/v1alpha1:SampleDB');
    assert.ok(sampleDb);
    assert.ok(sampleDb.dependsOn.includes('ops/crds/CustomResourceDefinition/sampledbs.sampledb.io'));
    assert.deepEqual((sampleDb.inputs as { spec: unknown }).spec, {
      version: '16',
      storage: { size: '1Gi' },
      service: { port: 6432 },
    });
  });

  test('an invalid spec fails with the field named, before anything is sent', async () => {
    await assert.rejects(
      runWithMocks(
        {},
        () => new SampleDb('bad', { namespace: 'shop', spec: { version: '16', storage: { size: 'lots' } } }),
      ),
      /spec\.storage\.size/,
    );
  });
});

describe('the published entry points', () => {
  // package.json "files" leaves out the controller, the runtime and the stack program; an entry point that imported
  // them would fail with ERR_MODULE_NOT_FOUND in every project that installs the package.
  test('import nothing that the package does not ship', () => {
    const root = new URL('../../../', import.meta.url);
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { files: string[] };
    const excluded = pkg.files
      .filter((f) => f.startsWith('!lib/'))
      .map((f) => `src/${f.slice('!lib/'.length).replace(/\.\*$/, '.ts')}`);
    const isExcluded = (file: string) =>
      excluded.some((e) => (e.endsWith('/') ? file.startsWith(e) : file === e));
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      const text = readFileSync(new URL(file, root), 'utf8');
      for (const [, specifier] of text.matchAll(/^(?:import|export)[^;]*?from '(\.[^']+)'/gm)) {
        visit(join(dirname(file), specifier as string));
      }
    };
    visit('src/index.ts');
    visit('src/deploy/index.ts');
    assert.ok(reached.has('src/deploy/components.ts') && reached.has('src/api/endpoint.ts'));
    assert.deepEqual([...reached].filter(isExcluded), []);
  });
});
