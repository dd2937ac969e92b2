// The generator's own proof before it writes a chart: the derived templates, rendered here for every combination of
// switch, list and optional states (and two sets of plain values), equal what the constructs synthesize for the same
// values. The integration tests prove the printed Go templates the same way with a real helm binary.
import { isDeepStrictEqual } from 'node:util';
import type { SampleDbOperatorProps } from '../../index.ts';
import { type JsonObject, operatorObjects, PACKAGE_VERSION } from '../sources.ts';
import { MANAGED_BY_LABEL, propsFromValues } from './bindings.ts';
import { type ObjectTemplate, render } from './template.ts';
import { type ChartValues, chartValues, type RenderContext } from './values.ts';

/** Objects as the chart renders them, from the constructs: the only change is `managed-by: Helm`. */
export function expectedObjects(props: SampleDbOperatorProps): JsonObject[] {
  return operatorObjects(props).map(
    ({ manifest }) =>
      JSON.parse(
        JSON.stringify(manifest, (key, value) =>
          key === MANAGED_BY_LABEL && value === 'cdk8s' ? 'Helm' : value,
        ),
      ) as JsonObject,
  );
}

/** A stable identity for comparing two sets of objects. */
export const identityOf = (o: JsonObject) => {
  const meta = o.metadata as { name?: string; namespace?: string };
  return `${o.kind}/${meta.namespace ?? ''}/${meta.name ?? ''}`;
};

export const sortObjects = (objects: JsonObject[]) =>
  [...objects].sort((a, b) => identityOf(a).localeCompare(identityOf(b)));

/** The value sets the generator checks: every combination of the structural states, over two sets of plain values. */
export function valueMatrix(): Array<{ overrides: Record<string, unknown>; context: RenderContext }> {
  const plain = [
    {},
    {
      name: 'sdb',
      replicas: 3,
      logLevel: 'debug',
      metricsPort: 9090,
      healthPort: 9091,
      postgresImageRepository: 'mirror.example.com/library/postgres',
      image: {
        repository: 'registry.example.com/team/sampledb',
        digest: `sha256:${'ab'.repeat(32)}`,
        pullPolicy: 'Always',
      },
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1.5Gi' } },
    },
  ];
  const out: Array<{ overrides: Record<string, unknown>; context: RenderContext }> = [];
  for (const base of plain)
    for (const createNamespace of [false, true])
      for (const deletionProtection of [true, false])
        for (const monitoring of [false, true])
          for (const leaderElection of [true, false])
            for (const watchNamespaces of [[], ['team-a'], ['team-a', 'team-b']])
              for (const imagePullSecrets of [[], ['regcred'], ['regcred', 'mirror']])
                for (const cpuLimit of [undefined, '2']) {
                  const overrides: Record<string, unknown> = {
                    ...base,
                    createNamespace,
                    deletionProtection,
                    monitoring: { enabled: monitoring },
                    leaderElection,
                    watchNamespaces,
                    imagePullSecrets,
                    ...(createNamespace ? { namespace: 'ops-system' } : {}),
                    ...(leaderElection ? {} : { replicas: 1 }),
                  };
                  if (cpuLimit) {
                    const resources = (base as { resources?: { limits?: object } }).resources;
                    overrides.resources = {
                      ...resources,
                      limits: { ...(resources?.limits ?? {}), cpu: cpuLimit },
                    };
                  }
                  out.push({
                    overrides,
                    context: { releaseNamespace: 'sampledb-system', appVersion: PACKAGE_VERSION },
                  });
                }
  return out;
}

/** Throws with the first value set and object where the templates and the constructs disagree. */
export function verifyTemplates(templates: readonly ObjectTemplate[]): number {
  const matrix = valueMatrix();
  for (const { overrides, context } of matrix) {
    const values: ChartValues = chartValues(overrides);
    const rendered = sortObjects(render(templates, { values, context }));
    const expected = sortObjects(expectedObjects(propsFromValues(values, context)));
    if (isDeepStrictEqual(rendered, expected)) continue;
    const ids = (list: JsonObject[]) => list.map(identityOf).join(', ');
    const differing = expected.find((e, i) => !isDeepStrictEqual(e, rendered[i]));
    throw new Error(
      `helm chart generator: the templates do not render what the constructs synthesize for values ${JSON.stringify(overrides)}:\n` +
        `  constructs: ${ids(expected)}\n  templates:  ${ids(rendered)}\n` +
        (differing
          ? `  first difference in ${identityOf(differing)}:\n    constructs: ${JSON.stringify(differing)}\n    templates:  ${JSON.stringify(rendered[expected.indexOf(differing)])}`
          : ''),
    );
  }
  return matrix.length;
}
