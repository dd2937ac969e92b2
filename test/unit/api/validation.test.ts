import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { parseAllDocuments } from 'yaml';
import {
  compareQuantities,
  parseQuantity,
  resolveSampleDbSpec,
  sampleDbBackupValidator,
  sampleDbValidator,
} from '../../../src/api/index.ts';
import {
  INVALID_CREATES,
  INVALID_UPDATES,
  VALID_SPEC,
  VALID_UPDATES,
} from '../../support/invalid-sampledbs.ts';

const root = new URL('../../../', import.meta.url);
const readYaml = (file: string) =>
  parseAllDocuments(readFileSync(new URL(file, root), 'utf8')).map((doc) => doc.toJSON()) as Array<{
    kind: string;
    metadata: { name: string };
    spec: Record<string, unknown>;
  }>;

/** The CRD's own openAPIV3Schema, read from dist/ (what the apiserver receives), compiled by a JSON Schema validator. */
function crdSchemaValidator(crdName: string) {
  const crd = readYaml('dist/0000-sampledb-crds.k8s.yaml').find((doc) => doc.metadata.name === crdName);
  assert.ok(crd, `${crdName} is in dist/`);
  const schema = (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: object } }> }).versions[0]
    ?.schema.openAPIV3Schema;
  return new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema as object);
}

const sampleDb = (spec: Record<string, unknown>, name = 'db') => ({
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDB',
  metadata: { name },
  spec,
});

describe('the CRD schema in dist/', () => {
  const validateCrd = crdSchemaValidator('sampledbs.sampledb.io');

  it('accepts every example SampleDB in dist/', () => {
    const examples = readYaml('dist/0002-sampledb-examples.k8s.yaml').filter(
      (doc) => doc.kind === 'SampleDB',
    );
    assert.ok(examples.length >= 2, 'a minimal and a full example');
    for (const example of examples) {
      assert.ok(validateCrd(example), `${example.metadata.name}: ${JSON.stringify(validateCrd.errors)}`);
      assert.deepEqual(
        sampleDbValidator.validate(example),
        [],
        `${example.metadata.name} passes the CEL twins`,
      );
    }
  });

  const schemaLayer = INVALID_CREATES.filter((c) => c.layer === 'schema');
  it(`refuses ${schemaLayer.length} invalid specs, naming the field`, () => {
    assert.ok(schemaLayer.length >= 10);
    for (const invalid of schemaLayer) {
      assert.equal(validateCrd(sampleDb(invalid.spec)), false, `${invalid.title} must be refused`);
      const paths = (validateCrd.errors ?? []).map((e) =>
        [
          ...e.instancePath.split('/').filter(Boolean),
          ...(e.params && 'missingProperty' in e.params ? [e.params.missingProperty] : []),
        ].join('.'),
      );
      assert.ok(
        paths.includes(invalid.field),
        `${invalid.title}: errors name ${paths.join(', ')}, not ${invalid.field}`,
      );
    }
  });
});

describe('sampleDbValidator (schema + CEL twins)', () => {
  it(`refuses all ${INVALID_CREATES.length} invalid creates with an error on the field`, () => {
    assert.ok(INVALID_CREATES.length >= 15);
    for (const invalid of INVALID_CREATES) {
      const errors = sampleDbValidator.validate(sampleDb(invalid.spec, invalid.name));
      assert.ok(
        errors.some((e) => e.field === invalid.field),
        `${invalid.title}: got ${JSON.stringify(errors)}`,
      );
    }
  });

  it('refuses invalid updates through the transition rules, naming the field', () => {
    for (const invalid of INVALID_UPDATES) {
      assert.deepEqual(
        sampleDbValidator.validate(sampleDb(invalid.after)),
        [],
        `${invalid.title}: valid on its own`,
      );
      const errors = sampleDbValidator.validateUpdate(sampleDb(invalid.before), sampleDb(invalid.after));
      assert.ok(
        errors.some((e) => e.field === invalid.field),
        `${invalid.title}: got ${JSON.stringify(errors)}`,
      );
    }
  });

  it('accepts valid updates', () => {
    for (const valid of VALID_UPDATES) {
      assert.deepEqual(
        sampleDbValidator.validateUpdate(sampleDb(valid.before), sampleDb(valid.after)),
        [],
        valid.title,
      );
    }
  });

  it('measures a major downgrade against the major the server runs, not only the spec', () => {
    // After a failed upgrade the server still runs 15: going back to it is allowed, going below it is not.
    const failedUpgrade = {
      ...sampleDb({ ...VALID_SPEC, version: '17' }),
      status: { currentVersion: '15.8' },
    };
    assert.deepEqual(
      sampleDbValidator.validateUpdate(failedUpgrade, sampleDb({ ...VALID_SPEC, version: '15' })),
      [],
    );
    const errors = sampleDbValidator.validateUpdate(
      failedUpgrade,
      sampleDb({ ...VALID_SPEC, version: '14' }),
    );
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.version'],
    );
    assert.match(errors[0]?.message ?? '', /may not go below the major the server runs/);
    // A status write (spec unchanged) is never refused, whatever the server reports.
    const odd = { ...sampleDb({ ...VALID_SPEC, version: '15' }), status: { currentVersion: '17.2' } };
    assert.deepEqual(sampleDbValidator.validateUpdate(odd, odd), []);
  });

  it('flags unknown fields so typos fail at synth time', () => {
    const errors = sampleDbValidator.validate(
      sampleDb({ ...VALID_SPEC, storage: { size: '1Gi', sotrageClass: 'x' } }),
    );
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.storage.sotrageClass'],
    );
  });

  it('SampleDBBackup needs a sampleDB reference and a known method', () => {
    const backup = (spec: unknown) => ({
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBBackup',
      metadata: { name: 'b' },
      spec,
    });
    assert.deepEqual(sampleDbBackupValidator.validate(backup({ sampleDB: { name: 'orders' } })), []);
    assert.deepEqual(
      sampleDbBackupValidator.validate(backup({})).map((e) => e.field),
      ['spec.sampleDB'],
    );
    assert.deepEqual(
      sampleDbBackupValidator
        .validate(backup({ sampleDB: { name: 'orders' }, method: 'tar' }))
        .map((e) => e.field),
      ['spec.method'],
    );
    assert.deepEqual(
      sampleDbBackupValidator
        .validateUpdate(backup({ sampleDB: { name: 'a' } }), backup({ sampleDB: { name: 'b' } }))
        .map((e) => e.field),
      ['spec'],
    );
  });
});

describe('defaults', () => {
  it('fills every documented default', () => {
    const resolved = resolveSampleDbSpec({ version: '16', storage: { size: '1Gi' } });
    assert.equal(resolved.image, 'docker.io/library/postgres:16');
    assert.deepEqual(resolved.service, { type: 'ClusterIP', port: 5432, annotations: {} });
    assert.deepEqual(resolved.deletion, { policy: 'Snapshot', protection: false });
    assert.equal(resolved.bootstrap.database, 'app');
    assert.equal(resolved.bootstrap.owner, 'app');
    assert.deepEqual(resolved.resources, {
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { memory: '1Gi' },
    });
    assert.equal(resolved.backup, undefined);
  });

  it('keeps what the user set and never lets the default limit undercut a larger request', () => {
    const resolved = resolveSampleDbSpec({
      version: '15',
      image: 'registry.test/pg:15',
      storage: { size: '1Gi' },
      resources: { requests: { memory: '4Gi' } },
      bootstrap: { initSQL: { name: 'sql' } },
      backup: { schedule: '@daily' },
    });
    assert.equal(resolved.image, 'registry.test/pg:15');
    assert.equal(resolved.resources.limits.memory, '4Gi');
    assert.equal(resolved.bootstrap.initSQL?.key, 'init.sql');
    assert.equal(resolved.backup?.suspend, false);
  });
});

describe('quantities', () => {
  it('parses the forms the apiserver accepts', () => {
    assert.equal(parseQuantity('1Gi'), 2 ** 30);
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('2k'), 2000);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('1.5Gi'), 1.5 * 2 ** 30);
    assert.equal(parseQuantity('ten'), undefined);
  });

  it('compares across units like CEL quantity().compareTo()', () => {
    assert.equal(compareQuantities('1Gi', '1024Mi'), 0);
    assert.equal(compareQuantities('1G', '1Gi'), -1);
    assert.equal(compareQuantities('2', '1500m'), 1);
  });
});
