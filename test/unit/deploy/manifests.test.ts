import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import packageJson from '../../../package.json' with { type: 'json' };
import {
  crdObjects,
  IMAGE_PLACEHOLDER,
  namespaceObjects,
  operatorObjects,
  substitute,
  tierOf,
} from '../../../src/deploy/manifests.ts';

// src/app.ts's DIST_IMAGE (importing app.ts would synthesize dist/).
const DIST_IMAGE = `localhost/sampledb-operator:${packageJson.version}`;

function distObjects(file: string): unknown[] {
  const text = readFileSync(new URL(`../../../dist/${file}`, import.meta.url), 'utf8');
  return parseAllDocuments(text).map((doc) => doc.toJSON());
}

describe('manifests come from the constructs, the same as dist/', () => {
  test('the CRDs are the ones in dist/', () => {
    assert.deepEqual(crdObjects(), distObjects('0000-sampledb-crds.k8s.yaml'));
  });

  test('the operator objects are the ones in dist/ but for the image', () => {
    const objects = operatorObjects({}).map((o) => substitute(o, IMAGE_PLACEHOLDER, DIST_IMAGE));
    assert.deepEqual(objects, distObjects('0001-sampledb-operator.k8s.yaml'));
  });

  test('the placeholder appears exactly once: the controller container image', () => {
    const json = JSON.stringify(operatorObjects({ watchNamespaces: ['apps'], replicas: 1 }));
    assert.equal(json.split(IMAGE_PLACEHOLDER).length - 1, 1);
  });
});

describe('substitute', () => {
  test('replaces equal strings at any depth and leaves the input alone', () => {
    const input = { a: 'x', b: ['x', { c: 'x', d: 'xx' }], e: 1, f: null };
    const marker = { replaced: true };
    const out = substitute(input, 'x', marker);
    assert.deepEqual(out, { a: marker, b: [marker, { c: marker, d: 'xx' }], e: 1, f: null });
    assert.deepEqual(input, { a: 'x', b: ['x', { c: 'x', d: 'xx' }], e: 1, f: null });
  });
});

describe('tierOf', () => {
  test('namespaces and CRDs first, identity and config next, workloads and custom resources last', () => {
    assert.equal(tierOf({ kind: 'Namespace' }), 0);
    assert.equal(tierOf({ kind: 'CustomResourceDefinition' }), 0);
    assert.equal(tierOf({ kind: 'ServiceAccount' }), 1);
    assert.equal(tierOf({ kind: 'ClusterRoleBinding' }), 1);
    assert.equal(tierOf({ kind: 'Deployment' }), 2);
    assert.equal(tierOf({ kind: 'Service' }), 2);
    assert.equal(tierOf({ kind: 'SampleDB' }), 2);
  });
});

describe('namespaceObjects', () => {
  test('one restricted namespace per name', () => {
    const objects = namespaceObjects(['a', 'b']);
    assert.deepEqual(
      objects.map((o) => [
        o.kind,
        o.metadata.name,
        (o.metadata.labels as Record<string, string>)['pod-security.kubernetes.io/enforce'],
      ]),
      [
        ['Namespace', 'a', 'restricted'],
        ['Namespace', 'b', 'restricted'],
      ],
    );
  });
});
