// The OLM bundle against the constructs it is generated from: the same RBAC (split the way OLM grants it), the same
// Deployment (watching OLM's target namespaces), the CRDs, descriptors that point at real schema fields, examples
// that pass the API's validation. test/integration/packaging/olm.test.ts runs operator-framework/api's validators.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  sampleDbBackupValidator,
  sampleDbDrillValidator,
  sampleDbRestoreValidator,
  sampleDbValidator,
} from '../../../src/api/index.ts';
import { bundleFiles, CAPABILITY_LEVEL, CHANNEL } from '../../../src/packaging/olm/bundle.ts';
import { crdObjects, type JsonObject, operatorObjects } from '../../../src/packaging/sources.ts';

const files = bundleFiles();
const csv = parse(files.get('manifests/sampledb-operator.clusterserviceversion.yaml') ?? '') as {
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    installModes: Array<{ type: string; supported: boolean }>;
    customresourcedefinitions: {
      owned: Array<{
        name: string;
        kind: string;
        version: string;
        specDescriptors: Array<{ path: string; 'x-descriptors': string[] }>;
        statusDescriptors: Array<{ path: string; 'x-descriptors': string[] }>;
      }>;
    };
    install: {
      spec: {
        permissions: Array<{ serviceAccountName: string; rules: JsonObject[] }>;
        clusterPermissions: Array<{ serviceAccountName: string; rules: JsonObject[] }>;
        deployments: Array<{ name: string; spec: JsonObject }>;
      };
    };
    icon: Array<{ base64data: string; mediatype: string }>;
  };
};
const defaults = operatorObjects({ image: 'localhost/sampledb-operator:0.1.0' }).map((o) => o.manifest);
const byKind = (kind: string) => defaults.filter((o) => o.kind === kind);
const key = (rule: JsonObject) => JSON.stringify(rule);

/** Resolves a descriptor path (`a.b.c`) in a CRD's openAPIV3Schema below spec or status. */
function schemaAt(crd: JsonObject, root: 'spec' | 'status', path: string): unknown {
  const versions = (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: JsonObject } }> }).versions;
  const properties = versions[0]?.schema.openAPIV3Schema.properties as Record<string, JsonObject> | undefined;
  let node = properties?.[root] as JsonObject | undefined;
  for (const part of path.split('.')) {
    node = (node?.properties as Record<string, JsonObject> | undefined)?.[part];
  }
  return node;
}

describe('OLM bundle', () => {
  it('grants exactly the rules the construct grants, split into namespaced and cluster-wide', () => {
    const { permissions, clusterPermissions } = csv.spec.install.spec;
    const serviceAccount = (byKind('ServiceAccount')[0]?.metadata as { name: string } | undefined)?.name;
    assert.equal(permissions[0]?.serviceAccountName, serviceAccount);
    assert.equal(clusterPermissions[0]?.serviceAccountName, serviceAccount);
    // All-namespaces mode: the ClusterRole holds the watched-namespace and the cluster rules; the Role the Lease.
    const constructRules = [...byKind('ClusterRole'), ...byKind('Role')].flatMap(
      (o) => o.rules as JsonObject[],
    );
    const bundleRules = [...(permissions[0]?.rules ?? []), ...(clusterPermissions[0]?.rules ?? [])];
    assert.deepEqual(new Set(bundleRules.map(key)), new Set(constructRules.map(key)));
    // Cluster-wide only what is cluster-scoped: class reads, and the PersistentVolume patch (Retain fallback).
    for (const rule of clusterPermissions[0]?.rules ?? []) {
      if ((rule.resources as string[]).includes('persistentvolumes')) {
        assert.deepEqual(rule.verbs, ['patch'], key(rule));
        continue;
      }
      assert.ok(
        ['storage.k8s.io', 'snapshot.storage.k8s.io'].includes((rule.apiGroups as string[])[0] as string) ||
          JSON.stringify(rule.resources) === '["namespaces"]',
        `cluster-wide only for cluster-scoped rules: ${key(rule)}`,
      );
      assert.deepEqual(rule.verbs, ['get', 'list', 'watch']);
    }
  });

  it("runs the construct's Deployment, watching OLM's target namespaces", () => {
    const deployment = byKind('Deployment')[0] as { metadata: { name: string }; spec: JsonObject };
    const [installed] = csv.spec.install.spec.deployments;
    assert.equal(installed?.name, deployment.metadata.name);
    const withoutWatch = (spec: JsonObject) =>
      JSON.parse(
        JSON.stringify(spec, (k, v) =>
          k === 'env' ? v.filter((e: { name: string }) => e.name !== 'WATCH_NAMESPACES') : v,
        ),
      );
    assert.deepEqual(withoutWatch(installed?.spec ?? {}), withoutWatch(deployment.spec));
    const env = (
      installed?.spec as { template: { spec: { containers: Array<{ env: JsonObject[] }> } } } | undefined
    )?.template.spec.containers[0]?.env;
    assert.deepEqual(
      env?.find((e) => e.name === 'WATCH_NAMESPACES'),
      {
        name: 'WATCH_NAMESPACES',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
      },
    );
  });

  it('supports every install mode the operator does', () => {
    assert.deepEqual(
      csv.spec.installModes.map((m) => [m.type, m.supported]),
      [
        ['OwnNamespace', true],
        ['SingleNamespace', true],
        ['MultiNamespace', true],
        ['AllNamespaces', true],
      ],
    );
  });

  it('owns the CRDs, ships them, and describes only fields that exist', () => {
    const crds = crdObjects().map((o) => o.manifest);
    assert.deepEqual(
      csv.spec.customresourcedefinitions.owned.map((o) => o.name).sort(),
      crds.map((c) => (c.metadata as { name: string }).name).sort(),
    );
    for (const owned of csv.spec.customresourcedefinitions.owned) {
      const crd = crds.find((c) => (c.metadata as { name: string }).name === owned.name) as JsonObject;
      assert.deepEqual(parse(files.get(`manifests/${owned.name}.crd.yaml`) ?? ''), crd);
      assert.ok(owned.specDescriptors.length > 0 && owned.statusDescriptors.length > 0);
      for (const d of owned.specDescriptors) assert.ok(schemaAt(crd, 'spec', d.path), `spec.${d.path}`);
      for (const d of owned.statusDescriptors) assert.ok(schemaAt(crd, 'status', d.path), `status.${d.path}`);
    }
    const sampleDb = csv.spec.customresourcedefinitions.owned.find((o) => o.kind === 'SampleDB');
    const xs = (path: string) =>
      sampleDb?.specDescriptors.find((d) => d.path === path)?.['x-descriptors'] ?? [];
    assert.ok(xs('deletion.protection').includes('urn:alm:descriptor:com.tectonic.ui:booleanSwitch'));
    assert.ok(xs('deletion.policy').includes('urn:alm:descriptor:com.tectonic.ui:select:Snapshot'));
    assert.ok(
      xs('bootstrap.credentialsSecret.name').includes('urn:alm:descriptor:io.kubernetes:core:v1:Secret'),
    );
    assert.ok(xs('resources').includes('urn:alm:descriptor:com.tectonic.ui:resourceRequirements'));
    const status = (path: string) =>
      sampleDb?.statusDescriptors.find((d) => d.path === path)?.['x-descriptors'];
    assert.deepEqual(status('conditions'), ['urn:alm:descriptor:io.kubernetes.conditions']);
  });

  it('offers examples the API accepts', () => {
    const examples = JSON.parse(csv.metadata.annotations['alm-examples'] ?? '[]') as JsonObject[];
    const validators = {
      SampleDB: sampleDbValidator,
      SampleDBBackup: sampleDbBackupValidator,
      SampleDBRestore: sampleDbRestoreValidator,
      SampleDBDrill: sampleDbDrillValidator,
    };
    // One example per kind of the API: the OLM validators warn about a provided API without one.
    assert.deepEqual(examples.map((e) => e.kind).sort(), Object.keys(validators).sort());
    for (const example of examples) {
      const validator = validators[example.kind as keyof typeof validators];
      assert.deepEqual(validator.validate(example), [], JSON.stringify(example));
    }
  });

  it('says its capability level, channel and icon, and the image labels match the annotations', () => {
    assert.equal(csv.metadata.annotations.capabilities, CAPABILITY_LEVEL);
    assert.equal(CAPABILITY_LEVEL, 'Basic Install');
    assert.match(Buffer.from(csv.spec.icon[0]?.base64data ?? '', 'base64').toString(), /^<svg /);
    const annotations = (
      parse(files.get('metadata/annotations.yaml') ?? '') as { annotations: Record<string, string> }
    ).annotations;
    assert.equal(annotations['operators.operatorframework.io.bundle.channels.v1'], CHANNEL);
    const dockerfile = files.get('bundle.Dockerfile') ?? '';
    for (const [k, v] of Object.entries(annotations)) assert.ok(dockerfile.includes(`LABEL ${k}=${v}`), k);
    // No ValidatingAdmissionPolicy: bundles cannot carry one (docs say how to add the deletion protection).
    assert.deepEqual([...files.keys()].filter((f) => f.startsWith('manifests/')).sort(), [
      'manifests/sampledb-operator-metrics.service.yaml',
      'manifests/sampledb-operator.clusterserviceversion.yaml',
      'manifests/sampledb-operator.poddisruptionbudget.yaml',
      'manifests/sampledbbackups.sampledb.io.crd.yaml',
      'manifests/sampledbdrills.sampledb.io.crd.yaml',
      'manifests/sampledbrestores.sampledb.io.crd.yaml',
      'manifests/sampledbs.sampledb.io.crd.yaml',
    ]);
  });
});
