// dist/ on a real kube-apiserver: every manifest applies with server-side apply, the CRDs are Established and
// printed as designed, the CEL rules refuse what the API promises to refuse (naming the field), the deletion
// protection policy holds, and the operator Deployment is admitted by a PodSecurity "restricted" namespace.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import {
  INVALID_CREATES,
  INVALID_UPDATES,
  VALID_CREATES,
  VALID_UPDATES,
} from '../../support/invalid-sampledbs.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const cluster = await sharedCluster();
const distDir = new URL('../../../dist/', import.meta.url).pathname;
const distFiles = readdirSync(distDir)
  .filter((file) => file.endsWith('.k8s.yaml'))
  .sort();

async function kubectl(args: string[], input?: string) {
  return cluster.kubectl(args, input === undefined ? {} : { input });
}

async function kubectlOk(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  assert.equal(result.code, 0, `kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const sampleDb = (namespace: string, name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec,
  });

// Cleanup after the whole file: the deletion-protection test below relies on the policy applied from dist/.
after(async () => {
  // The examples include a protected SampleDB; lift protection so the namespace can go.
  await kubectl([
    'patch',
    'sdb',
    'orders',
    '-n',
    'sampledb-examples',
    '--type=merge',
    '-p',
    '{"spec":{"deletion":{"protection":false}}}',
  ]);
  await kubectl(['delete', '-f', `${distDir}${distFiles[2]}`, '--wait=false']);
  await kubectl(['delete', '-f', `${distDir}${distFiles[1]}`, '--wait=false']);
});

describe('dist/ on a real apiserver', () => {
  before(async () => {
    assert.deepEqual(distFiles, [
      '0000-sampledb-crds.k8s.yaml',
      '0001-sampledb-operator.k8s.yaml',
      '0002-sampledb-examples.k8s.yaml',
      '0003-sampledb-monitoring.k8s.yaml',
    ]);
    await kubectlOk([
      'apply',
      '--server-side',
      '--field-manager=dist-test',
      '-f',
      `${distDir}${distFiles[0]}`,
    ]);
    await kubectlOk([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/sampledbs.sampledb.io',
      'crd/sampledbbackups.sampledb.io',
      'crd/sampledbrestores.sampledb.io',
    ]);
    // Not the monitoring objects: their CRDs are the Prometheus operator's, which this control plane does not have.
    for (const file of distFiles.slice(1, 3)) {
      await kubectlOk(['apply', '--server-side', '--field-manager=dist-test', '-f', `${distDir}${file}`]);
    }
  });

  it('stores the example SampleDBs with their defaults applied', async () => {
    const minimal = JSON.parse(
      await kubectlOk(['get', 'sdb', 'minimal', '-n', 'sampledb-examples', '-o', 'json']),
    );
    assert.equal(minimal.spec.version, '17');
    assert.deepEqual(minimal.spec.service, { type: 'ClusterIP', port: 5432 });
    assert.deepEqual(minimal.spec.deletion, { policy: 'Snapshot', protection: false });
    assert.deepEqual(minimal.spec.bootstrap, { database: 'app', owner: 'app' });
    const orders = JSON.parse(
      await kubectlOk(['get', 'sampledb', 'orders', '-n', 'sampledb-examples', '-o', 'json']),
    );
    assert.equal(orders.spec.backup.retention.count, 7);
    assert.equal(orders.spec.bootstrap.initSQL.key, 'init.sql');
  });

  it('prints the designed columns in `kubectl get sdb`', async () => {
    const table = await kubectlOk(['get', 'sdb', '-n', 'sampledb-examples']);
    const header = table
      .split('\n')[0]
      ?.trim()
      .split(/\s{2,}/);
    assert.deepEqual(header, ['NAME', 'READY', 'VERSION', 'PHASE', 'LAST BACKUP', 'AGE']);
    assert.match(table, /^minimal\s+17\s+/m, 'minimal row with its version');
    const wide = await kubectlOk(['get', 'sdb', '-n', 'sampledb-examples', '-o', 'wide']);
    assert.match(wide.split('\n')[0] ?? '', /ENDPOINT/);
    const singular = await kubectlOk(['get', 'sampledb', 'minimal', '-n', 'sampledb-examples', '-o', 'name']);
    assert.equal(singular.trim(), 'sampledb.sampledb.io/minimal');
    const category = await kubectlOk(['get', 'sampledb-operator', '-n', 'sampledb-examples', '-o', 'name']);
    assert.match(category, /sampledb\.sampledb\.io\/minimal/);
    const explain = await kubectlOk(['explain', 'sampledb.spec.storage.size']);
    assert.match(explain, /May grow, never\s+shrink/);
  });

  it('admits the operator Deployment in its PodSecurity "restricted" namespace', async () => {
    const namespace = JSON.parse(await kubectlOk(['get', 'namespace', 'sampledb-system', '-o', 'json']));
    assert.equal(namespace.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
    // The ReplicaSet controller creates the pods; PodSecurity admission would refuse them (FailedCreate) if the
    // pod template broke the profile.
    const pods = await pollUntil(
      'operator pods created',
      async () => {
        const list = JSON.parse(
          await kubectlOk([
            'get',
            'pods',
            '-n',
            'sampledb-system',
            '-l',
            'app.kubernetes.io/component=controller',
            '-o',
            'json',
          ]),
        );
        return list.items.length === 2 ? list.items : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.equal(pods.length, 2);
    const events = await kubectlOk([
      'get',
      'events',
      '-n',
      'sampledb-system',
      '--field-selector=reason=FailedCreate',
      '-o',
      'name',
    ]);
    assert.equal(events.trim(), '', 'no pod was refused');
  });
});

// testNamespace() deletes the namespace after the file, so it is called at top level.
const celNamespace = await testNamespace(cluster, 'cel');
const protectNamespace = await testNamespace(cluster, 'protect');

describe('CEL and schema validation on the apiserver', () => {
  const namespace = celNamespace;

  for (const invalid of INVALID_CREATES) {
    it(`refuses create: ${invalid.title} (names ${invalid.field})`, async () => {
      const name = invalid.name ?? `bad-${INVALID_CREATES.indexOf(invalid)}`;
      const result = await kubectl(['create', '-f', '-'], sampleDb(namespace, name, invalid.spec));
      assert.notEqual(result.code, 0, `${invalid.title} was accepted`);
      assert.match(result.stderr, /is invalid/);
      assert.ok(
        result.stderr.includes(invalid.field),
        `error does not name ${invalid.field}: ${result.stderr}`,
      );
    });
  }

  // The other half of the shared table: what the TypeScript twins accept, the CEL rules must accept too.
  for (const [index, valid] of VALID_CREATES.entries()) {
    it(`accepts create: ${valid.title}`, async () => {
      await kubectlOk(
        ['create', '--dry-run=server', '-f', '-'],
        sampleDb(namespace, `ok-${index}`, valid.spec),
      );
    });
  }

  for (const [index, invalid] of INVALID_UPDATES.entries()) {
    it(`refuses update: ${invalid.title} (names ${invalid.field})`, async () => {
      const name = `update-${index}`;
      await kubectlOk(['create', '-f', '-'], sampleDb(namespace, name, invalid.before));
      const result = await kubectl(['replace', '-f', '-'], sampleDb(namespace, name, invalid.after));
      assert.notEqual(result.code, 0, `${invalid.title} was accepted`);
      assert.ok(
        result.stderr.includes(invalid.field),
        `error does not name ${invalid.field}: ${result.stderr}`,
      );
    });
  }

  for (const [index, valid] of VALID_UPDATES.entries()) {
    it(`accepts update: ${valid.title}`, async () => {
      const name = `valid-${index}`;
      await kubectlOk(['create', '-f', '-'], sampleDb(namespace, name, valid.before));
      await kubectlOk(
        ['apply', '--server-side', '--force-conflicts', '-f', '-'],
        sampleDb(namespace, name, valid.after),
      );
    });
  }
});

describe('deletion protection (ValidatingAdmissionPolicy from dist/)', () => {
  it('refuses to delete a protected SampleDB and says how to lift it; deletes once lifted', async () => {
    const namespace = protectNamespace;
    const spec = { version: '16', storage: { size: '1Gi' }, deletion: { protection: true } };
    await kubectlOk(['create', '-f', '-'], sampleDb(namespace, 'precious', spec));
    // The policy is applied with the operator manifests above; its binding takes a moment to be enforced.
    const refusal = await pollUntil(
      'deletion refused',
      async () => {
        const attempt = await kubectl(['delete', 'sdb', 'precious', '-n', namespace, '--dry-run=server']);
        return attempt.code !== 0 ? attempt.stderr : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.match(refusal, /is protected \(spec\.deletion\.protection: true\)/);
    assert.match(refusal, /kubectl patch sampledb precious/);
    assert.equal((await kubectl(['delete', 'sdb', 'precious', '-n', namespace])).code, 1);
    await kubectlOk(['get', 'sdb', 'precious', '-n', namespace]);

    await kubectlOk([
      'patch',
      'sdb',
      'precious',
      '-n',
      namespace,
      '--type=merge',
      '-p',
      '{"spec":{"deletion":{"protection":false}}}',
    ]);
    await kubectlOk(['delete', 'sdb', 'precious', '-n', namespace, '--timeout=30s']);
  });
});
