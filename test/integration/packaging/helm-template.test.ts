// The chart as a real helm renders it (helm v4 built from its Go module): lint, the default values against dist/,
// several non-default value sets against the constructs, and bad values refused with the value named. No cluster.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { propsFromValues } from '../../../src/packaging/helm/bindings.ts';
import { CHART_DIR } from '../../../src/packaging/helm/chart.ts';
import { chartValues } from '../../../src/packaging/helm/values.ts';
import { expectedObjects, identityOf, sortObjects } from '../../../src/packaging/helm/verify.ts';
import { crdObjects, type JsonObject, PACKAGE_VERSION } from '../../../src/packaging/sources.ts';
import { packagingTools, repoRoot, run } from '../support/packaging-tools.ts';

const { helm } = packagingTools();
const work = mkdtempSync(join(tmpdir(), 'helm-template-'));
after(() => rmSync(work, { recursive: true, force: true }));
const helmEnv = {
  HELM_CACHE_HOME: join(work, 'cache'),
  HELM_CONFIG_HOME: join(work, 'config'),
  HELM_DATA_HOME: join(work, 'data'),
};
const chart = join(repoRoot, CHART_DIR);
const RELEASE_NAMESPACE = 'sampledb-system';

let files = 0;
async function template(values: Record<string, unknown>, extra: string[] = []) {
  const file = join(work, `values-${files++}.json`);
  writeFileSync(file, JSON.stringify(values));
  return run(helm, ['template', 'sampledb-operator', chart, '-n', RELEASE_NAMESPACE, '-f', file, ...extra], {
    env: helmEnv,
  });
}

const objectsOf = (yaml: string) =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as JsonObject | null)
    .filter((o): o is JsonObject => o !== null);

const distObjects = (file: string) =>
  objectsOf(readFileSync(join(repoRoot, 'dist', file), 'utf8')).map(
    (o) =>
      JSON.parse(
        JSON.stringify(o, (k, v) => (k === 'app.kubernetes.io/managed-by' && v === 'cdk8s' ? 'Helm' : v)),
      ) as JsonObject,
  );

function assertSameObjects(actual: JsonObject[], expected: JsonObject[], what: string) {
  assert.deepEqual(
    sortObjects(actual).map(identityOf),
    sortObjects(expected).map(identityOf),
    `${what}: objects`,
  );
  assert.deepEqual(sortObjects(actual), sortObjects(expected), `${what}: content`);
}

describe('helm chart with a real helm', { timeout: 240_000 }, () => {
  it('passes helm lint --strict', async () => {
    const lint = await run(helm, ['lint', '--strict', chart], { env: helmEnv });
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
    assert.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders dist/ with the default values', async () => {
    const rendered = await template({}, ['--include-crds']);
    assert.equal(rendered.code, 0, rendered.stderr);
    const objects = objectsOf(rendered.stdout);
    const operator = distObjects('0001-sampledb-operator.k8s.yaml');
    // The release namespace is the operator's; helm (not the chart) creates it, so no Namespace object.
    assertSameObjects(
      objects.filter((o) => o.kind !== 'CustomResourceDefinition'),
      operator.filter((o) => o.kind !== 'Namespace'),
      'defaults',
    );
    // crds/ holds dist/'s CRDs.
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    assertSameObjects(
      crds,
      objectsOf(readFileSync(join(repoRoot, 'dist/0000-sampledb-crds.k8s.yaml'), 'utf8')),
      'crds',
    );
    assert.equal(crds.length, crdObjects().length);
  });

  it('renders the labelled Namespace too when told to create one', async () => {
    const file = join(work, 'own-namespace.json');
    writeFileSync(file, JSON.stringify({ namespace: 'sampledb-system', createNamespace: true }));
    const rendered = await run(helm, ['template', 'sampledb-operator', chart, '-n', 'default', '-f', file], {
      env: helmEnv,
    });
    assert.equal(rendered.code, 0, rendered.stderr);
    assertSameObjects(
      objectsOf(rendered.stdout),
      distObjects('0001-sampledb-operator.k8s.yaml'),
      'own namespace',
    );
  });

  const valueSets: Array<[string, Record<string, unknown>]> = [
    [
      'two watched namespaces, pull secrets, a CPU limit',
      {
        watchNamespaces: ['team-a', 'team-b'],
        imagePullSecrets: ['regcred', 'mirror'],
        resources: { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '250m', memory: '256Mi' } },
      },
    ],
    [
      'one replica without leader election, no deletion protection, debug logs',
      { replicas: 1, leaderElection: false, deletionProtection: false, logLevel: 'debug' },
    ],
    [
      'another name, ports, a digest-pinned image and a decimal memory limit',
      {
        name: 'sdb',
        metricsPort: 9090,
        healthPort: 9091,
        replicas: 3,
        image: {
          repository: 'registry.example.com:5000/team/op',
          digest: `sha256:${'c0'.repeat(32)}`,
          pullPolicy: 'Always',
        },
        resources: { limits: { memory: '700M' } },
      },
    ],
    [
      'a tag, one watched namespace, a fractional limit',
      { image: { tag: 'v9.9.9' }, watchNamespaces: ['only'], resources: { limits: { memory: '1.5Gi' } } },
    ],
    ['a limit in bytes', { resources: { limits: { memory: '268435456' } } }],
    [
      'a limit under the heap floor',
      { resources: { limits: { memory: '64Mi' }, requests: { memory: '32Mi' } } },
    ],
  ];
  for (const [what, values] of valueSets) {
    it(`renders what the constructs synthesize: ${what}`, async () => {
      const rendered = await template(values);
      assert.equal(rendered.code, 0, rendered.stderr);
      const props = propsFromValues(chartValues(values), {
        releaseNamespace: RELEASE_NAMESPACE,
        appVersion: PACKAGE_VERSION,
      });
      assertSameObjects(objectsOf(rendered.stdout), expectedObjects(props), what);
    });
  }

  const badValues: Array<[Record<string, unknown>, RegExp]> = [
    [{ replicas: 0 }, /replicas/],
    [{ replicas: 3, leaderElection: false }, /leaderElection: more than one replica needs leader election/],
    [{ metricsPort: 9000, healthPort: 9000 }, /healthPort: must differ from metricsPort/],
    [{ resources: { limits: { memory: '1e9' } } }, /resources\.limits\.memory|\/resources\/limits\/memory/],
    [{ watchNamespaces: ['Team A'] }, /watchNamespaces/],
    [{ createNamespace: true }, /createNamespace: needs namespace set/],
    [{ typo: 1 }, /typo/],
  ];
  for (const [values, message] of badValues) {
    it(`refuses ${JSON.stringify(values)} with the value named`, async () => {
      const rendered = await template(values);
      assert.notEqual(rendered.code, 0, `accepted: ${rendered.stdout.slice(0, 200)}`);
      assert.match(rendered.stderr, message);
    });
  }
});
