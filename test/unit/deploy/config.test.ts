import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ValidationError } from '../../../src/api/index.ts';
import { namespacesToCreate, parseStackConfig } from '../../../src/deploy/config.ts';

const DIGEST_REF = `registry.example.com/sampledb-operator@sha256:${'0'.repeat(64)}`;
const prebuilt = { build: false, ref: DIGEST_REF };

function errorsOf(fn: () => unknown): Record<string, string> {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return Object.fromEntries(err.errors.map((e) => [e.field, e.message]));
  }
  assert.fail('expected a ValidationError');
}

const fieldsOf = (fn: () => unknown): string[] => Object.keys(errorsOf(fn));

describe('parseStackConfig', () => {
  test('fills in the operator defaults and the image build defaults', () => {
    const config = parseStackConfig({ image: { registry: 'ghcr.io/acme/' } }, '1.2.3');
    assert.equal(config.namespace, 'sampledb-system');
    assert.equal(config.replicas, 2);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.watchNamespaces, []);
    assert.deepEqual(config.instances, []);
    assert.equal(config.createNamespaces, true);
    assert.equal(config.retainCrdsOnDelete, false);
    assert.deepEqual(config.image, {
      build: true,
      registry: 'ghcr.io/acme',
      repository: 'sampledb-operator',
      tag: '1.2.3',
      platforms: ['linux/amd64', 'linux/arm64'],
      push: true,
      cache: true,
    });
  });

  test('accepts the strings `pulumi config set` stores for numbers and booleans', () => {
    const config = parseStackConfig(
      { image: { build: 'false', ref: DIGEST_REF }, replicas: '3', createNamespaces: 'false' },
      '0.1.0',
    );
    assert.deepEqual(config.image, { build: false, ref: DIGEST_REF });
    assert.equal(config.replicas, 3);
    assert.equal(config.createNamespaces, false);
  });

  test('a prebuilt image must be pinned by digest', () => {
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: { build: false, ref: 'registry.example.com/op:1.0' } }, '0')),
      ['image.ref'],
    );
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: { build: false } }, '0')),
      ['image.ref'],
    );
  });

  test('build-only keys are refused with a prebuilt image and the other way round', () => {
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: { ...prebuilt, registry: 'ghcr.io/acme' } }, '0')),
      ['image.registry'],
    );
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: { registry: 'ghcr.io/acme', ref: DIGEST_REF } }, '0')),
      ['image.ref'],
    );
  });

  test('every bad key is reported at once, by name', () => {
    const fields = fieldsOf(() =>
      parseStackConfig(
        {
          namespace: 'Not_A_Namespace',
          image: { registry: 'ghcr.io/acme', platforms: ['amd64'], push: false, colour: 'blue' },
          replicas: 0,
          logLevel: 'verbose',
          watchNamespaces: ['shop', 'Bad Namespace'],
          resources: { requests: { cpu: 'lots' }, limit: {} },
          instances: [{ name: 'orders', spec: { version: '16' } }, 'nope'],
        },
        '0',
      ),
    );
    assert.deepEqual(fields.sort(), [
      'image.colour',
      'image.platforms[0]',
      'image.push',
      'instances[0].namespace',
      'instances[0].spec.storage',
      'instances[1]',
      'logLevel',
      'namespace',
      'replicas',
      'resources.limit',
      'resources.requests.cpu',
      'watchNamespaces[1]',
    ]);
  });

  test('an instance outside the watched namespace would never be reconciled', () => {
    assert.deepEqual(
      fieldsOf(() =>
        parseStackConfig(
          {
            image: prebuilt,
            watchNamespaces: ['shop'],
            instances: [
              { name: 'orders', namespace: 'billing', spec: { version: '16', storage: { size: '1Gi' } } },
            ],
          },
          '0',
        ),
      ),
      ['instances[0].namespace'],
    );
  });

  test('a message names the refused value and what the key takes', () => {
    const errors = errorsOf(() =>
      parseStackConfig(
        {
          image: { registry: 'ghcr.io/acme', platforms: ['amd64'] },
          namespace: 'Ops',
          replicas: '2.5',
          resources: { limits: { memory: 'lots' } },
        },
        '0',
      ),
    );
    assert.deepEqual(errors, {
      namespace: 'invalid value "Ops": must be a namespace name (a DNS-1123 label)',
      'image.platforms[0]': 'invalid value "amd64": must be os/arch',
      replicas: 'must be integer',
      'resources.limits.memory': 'invalid value "lots": must be a quantity, e.g. 500m or 256Mi',
    });
  });

  test('reads only "true" and "false" as booleans, at any depth', () => {
    const config = parseStackConfig(
      { image: { registry: 'r', cache: 'false' }, retainCrdsOnDelete: 'true' },
      '0',
    );
    assert.equal(config.image.build && config.image.cache, false);
    assert.equal(config.retainCrdsOnDelete, true);
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: prebuilt, createNamespaces: '1' }, '0')),
      ['createNamespaces'],
    );
  });

  test('checks each instance as the SampleDB it becomes, with the CRD rules, before anything is deployed', () => {
    const errors = errorsOf(() =>
      parseStackConfig(
        {
          image: prebuilt,
          instances: [
            { name: 'Orders_DB', namespace: 'shop', spec: { version: '12', storage: { size: '0' } } },
            { name: 'cart', namespace: 'shop', spec: { version: '16', storage: { size: '1Gi' } } },
            { name: 'cart', namespace: 'shop', spec: { version: '16', storage: { size: '1Gi' } } },
          ],
        },
        '0',
      ),
    );
    assert.deepEqual(Object.keys(errors).sort(), [
      'instances[0].name',
      'instances[0].spec.storage.size',
      'instances[0].spec.version',
      'instances[2]',
    ]);
    assert.match(errors['instances[0].spec.version'] ?? '', /unsupported PostgreSQL major version/);
    assert.equal(errors['instances[2]'], 'duplicates the instance shop/cart');
  });

  test('image is required', () => {
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({}, '0')),
      ['image'],
    );
  });
});

describe('namespacesToCreate', () => {
  const spec = { version: '16', storage: { size: '1Gi' } };
  test('watched and instance namespaces, once each, never the operator namespace', () => {
    const config = parseStackConfig(
      {
        namespace: 'ops',
        image: prebuilt,
        watchNamespaces: ['apps'],
        instances: [
          { name: 'a', namespace: 'apps', spec },
          { name: 'b', namespace: 'apps', spec },
        ],
      },
      '0',
    );
    assert.deepEqual(namespacesToCreate(config), ['apps']);
    const inOperatorNamespace = parseStackConfig(
      { namespace: 'ops', image: prebuilt, instances: [{ name: 'a', namespace: 'ops', spec }] },
      '0',
    );
    assert.deepEqual(namespacesToCreate(inOperatorNamespace), []);
  });

  test('none when createNamespaces is false', () => {
    const config = parseStackConfig(
      { image: prebuilt, createNamespaces: false, instances: [{ name: 'a', namespace: 'apps', spec }] },
      '0',
    );
    assert.deepEqual(namespacesToCreate(config), []);
  });

  test('takes postgresImageRepository, defaulting to the official image and refusing a tag', () => {
    assert.equal(
      parseStackConfig({ image: prebuilt }, '0').postgresImageRepository,
      'docker.io/library/postgres',
    );
    assert.equal(
      parseStackConfig({ image: prebuilt, postgresImageRepository: 'localhost/postgres' }, '0')
        .postgresImageRepository,
      'localhost/postgres',
    );
    assert.deepEqual(
      fieldsOf(() => parseStackConfig({ image: prebuilt, postgresImageRepository: 'postgres:16' }, '0')),
      ['postgresImageRepository'],
    );
  });
});
