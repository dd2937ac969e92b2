// The Helm chart generator without helm: the derived templates, evaluated in TypeScript, against the constructs; the
// values schema and the cross-value rules against the construct's own validation. test/integration/packaging/helm
// proves the printed Go templates with a real helm binary.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import { parse, parseAllDocuments } from 'yaml';
import { ValidationError } from '../../../src/api/index.ts';
import { SampleDbOperator } from '../../../src/constructs/index.ts';
import {
  BINDINGS,
  crossFieldErrors,
  maxOldSpaceMiB,
  propsFromValues,
  propsOf,
} from '../../../src/packaging/helm/bindings.ts';
import { chartFiles } from '../../../src/packaging/helm/chart.ts';
import { deriveTemplates } from '../../../src/packaging/helm/derive.ts';
import { render, type TNode } from '../../../src/packaging/helm/template.ts';
import { chartValues, defaultValues } from '../../../src/packaging/helm/values.ts';
import {
  expectedObjects,
  identityOf,
  sortObjects,
  verifyTemplates,
} from '../../../src/packaging/helm/verify.ts';
import { type JsonObject, operatorObjects, PACKAGE_VERSION } from '../../../src/packaging/sources.ts';

const context = { releaseNamespace: 'sampledb-system', appVersion: PACKAGE_VERSION };
const templates = deriveTemplates();
const dist = (file: string) =>
  parseAllDocuments(readFileSync(new URL(`../../../dist/${file}`, import.meta.url), 'utf8')).map(
    (d) => d.toJS() as JsonObject,
  );
const helmLabel = (objects: JsonObject[]) =>
  JSON.parse(
    JSON.stringify(objects, (k, v) => (k === 'app.kubernetes.io/managed-by' ? 'Helm' : v)),
  ) as JsonObject[];

describe('helm chart generator', () => {
  it('renders what the constructs synthesize for every combination of switches, lists and optional values', () => {
    assert.equal(verifyTemplates(templates), 576);
  });

  it('renders dist/ for the default values (the Namespace only with createNamespace)', () => {
    const operator = helmLabel(dist('0001-sampledb-operator.k8s.yaml'));
    const defaults = render(templates, { values: chartValues(), context });
    assert.deepEqual(sortObjects(defaults), sortObjects(operator.filter((o) => o.kind !== 'Namespace')));
    const withNamespace = render(templates, {
      values: chartValues({ namespace: 'sampledb-system', createNamespace: true }),
      context: { ...context, releaseNamespace: 'default' },
    });
    assert.deepEqual(sortObjects(withNamespace), sortObjects(operator));
  });

  it('turns watchNamespaces into a range over Roles, not a string substitution', () => {
    const perNamespace = templates.filter((t) => t.each);
    assert.deepEqual(perNamespace.map((t) => t.id).sort(), [
      'operator/rbac/role-binding-each',
      'operator/rbac/role-each',
    ]);
    const values = chartValues({ watchNamespaces: ['a', 'b', 'c'] });
    const roles = render(templates, { values, context }).filter((o) => o.kind === 'Role');
    assert.deepEqual(roles.map(identityOf).sort(), [
      'Role/a/sampledb-operator',
      'Role/b/sampledb-operator',
      'Role/c/sampledb-operator',
      'Role/sampledb-system/sampledb-operator-leader-election',
    ]);
  });

  it('fails its own check when a template is wrong', () => {
    const broken = deriveTemplates();
    const deployment = broken.find((t) => t.id === 'operator/deployment');
    assert.ok(deployment && deployment.body.t === 'map');
    // Drop the condition on one entry (imagePullSecrets): an empty list would render `imagePullSecrets: []`.
    const visit = (node: TNode): boolean =>
      node.t === 'map'
        ? node.entries.some((e) => {
            if (e.key === 'imagePullSecrets') {
              e.when = [];
              return true;
            }
            return visit(e.value);
          })
        : node.t === 'seq'
          ? node.items.some((i) => visit(i.value))
          : false;
    assert.ok(visit(deployment.body));
    assert.throws(() => verifyTemplates(broken), /Deployment\/sampledb-system\/sampledb-operator/);
  });

  it('computes the heap like the construct', () => {
    for (const memory of ['512Mi', '1Gi', '1.5Gi', '700M', '2G', '268435456', '64Mi', '1Ti']) {
      const objects = operatorObjects({ image: 'x/y:1', resources: { limits: { memory } } });
      const deployment = objects.find((o) => o.manifest.kind === 'Deployment')?.manifest as {
        spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
      };
      const env = deployment.spec.template.spec.containers[0]?.env.find((e) => e.name === 'NODE_OPTIONS');
      assert.equal(env?.value, `--max-old-space-size=${maxOldSpaceMiB(memory)}`, memory);
    }
  });
});

describe('helm chart values', () => {
  it('values.yaml holds the schema defaults and values.schema.json is the schema', () => {
    const files = chartFiles();
    assert.deepEqual(parse(files.get('values.yaml') ?? ''), defaultValues());
    const schema = JSON.parse(files.get('values.schema.json') ?? '{}');
    assert.equal(schema.properties.replicas.minimum, 1);
    assert.equal(schema.additionalProperties, false);
  });

  it('refuses bad values with the field named', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ replicas: 0 }, /replicas: must be >= 1/],
      [{ metricsPort: 80 }, /metricsPort: must be >= 1024/],
      [{ name: 'Not_A_Label' }, /name: must match pattern/],
      [{ watchNamespaces: ['ok', 'NOT OK'] }, /watchNamespaces\.1: must match pattern/],
      [{ resources: { limits: { memory: '1e9' } } }, /resources\.limits\.memory: must match pattern/],
      [{ resources: { limits: { memory: '0Mi' } } }, /resources\.limits\.memory: must NOT be valid/],
      [{ image: { digest: 'sha256:short' } }, /image\.digest: must match pattern/],
      [{ typo: true }, /must NOT have additional properties/],
      [{ resources: { requests: { cpu: null } } }, /resources\.requests: must have required property 'cpu'/],
    ];
    for (const [overrides, message] of cases) {
      assert.throws(
        () => chartValues(overrides),
        (e: unknown) => e instanceof ValidationError && message.test(e.message),
      );
    }
  });

  it('checks the rules that span two values with the construct messages', () => {
    for (const overrides of [
      { replicas: 3, leaderElection: false },
      { metricsPort: 9000, healthPort: 9000 },
    ]) {
      const values = chartValues(overrides);
      const [chartError] = crossFieldErrors(values, context);
      assert.ok(chartError, JSON.stringify(overrides));
      assert.throws(
        () => new SampleDbOperator(Testing.chart(), 'op', propsOf(values, context)),
        (e: unknown) =>
          e instanceof Error && e.message.includes(`${chartError.field}: ${chartError.message}`),
      );
    }
    assert.deepEqual(crossFieldErrors(chartValues({ createNamespace: true }), context), [
      {
        field: 'createNamespace',
        message:
          'needs namespace set to a namespace other than the release namespace (helm itself creates or needs that one)',
      },
    ]);
  });

  it('maps every value to its construct prop', () => {
    const values = chartValues({
      image: { repository: 'r.example/op', digest: `sha256:${'0'.repeat(64)}` },
      namespace: 'ops',
      createNamespace: true,
      watchNamespaces: ['a'],
      resources: { limits: { cpu: '1' } },
    });
    const props = propsFromValues(values, context);
    assert.equal(props.image, `r.example/op@sha256:${'0'.repeat(64)}`);
    assert.equal(props.namespace, 'ops');
    assert.deepEqual(props.resources, {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
    assert.equal(
      propsFromValues(chartValues(), context).image,
      `localhost/sampledb-operator:${PACKAGE_VERSION}`,
    );
    assert.ok(Object.keys(BINDINGS).length >= 16);
    assert.deepEqual(
      sortObjects(expectedObjects(props)).map(identityOf),
      sortObjects(render(templates, { values, context })).map(identityOf),
    );
  });
});
