// Issue 12: the operator's own upgrade never restarts a database. Two builds of the operator run in turn against the
// same SampleDB: this checkout, then a copy of it whose connection ConfigMap carries one more label (a changed
// default that does not touch pods). The second build reconciles (its label appears) and the StatefulSet keeps its
// generation, its ControllerRevisions and its pod.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbObject } from '../../../src/api/index.ts';
import { type KubeObject, resourceType } from '../../../src/runtime/index.ts';
import type { OperatorProcess } from '../support/operator.ts';
import {
  CONFIGMAPS,
  type E2eEnv,
  eventually,
  getOrUndefined,
  PODS,
  SAMPLEDBS,
  STATEFULSETS,
  startE2eEnv,
} from './e2e-env.ts';

const CONTROLLER_REVISIONS = resourceType('apps', 'v1', 'controllerrevisions', 'ControllerRevision');
const repo = join(import.meta.dirname, '../../..');
const MARK = 'build.sampledb.io/second';

let env: E2eEnv;
let operator: OperatorProcess | undefined;
let secondBuild: string;

/** A copy of this checkout whose connection ConfigMap gets one more label. */
function buildSecond(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sampledb-operator-b-'));
  cpSync(join(repo, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(repo, file), join(dir, file));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  const file = join(dir, 'src/sampledb/connection.ts');
  const source = readFileSync(file, 'utf8');
  const changed = source.replace(
    "childMeta(instance, instance.names.connectionConfigMap, 'connection')",
    `childMeta(instance, instance.names.connectionConfigMap, 'connection', { labels: { '${MARK}': 'true' } })`,
  );
  assert.notEqual(changed, source, 'the second build changes the connection ConfigMap');
  writeFileSync(file, changed);
  return dir;
}

before(async () => {
  env = await startE2eEnv();
  secondBuild = buildSecond();
});

after(async () => {
  await operator?.stop();
  await env?.stop();
  if (secondBuild) rmSync(secondBuild, { recursive: true, force: true });
});

describe("the operator's own upgrade (two builds in turn, kwok)", () => {
  it('leaves the StatefulSet revision and the pod untouched', async () => {
    const ns = await env.namespace('opup');
    operator = env.startOperator();
    await env.http.create(SAMPLEDBS, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'steady', namespace: ns },
      spec: { version: '16', storage: { size: '1Gi' } },
    } as SampleDbObject & KubeObject);
    await eventually(
      'SampleDB Ready under the first build',
      async () => {
        const db = await getOrUndefined<SampleDbObject & KubeObject>(env.http, SAMPLEDBS, ns, 'steady');
        return db?.status?.phase === 'Ready' ? db : undefined;
      },
      operator,
      120_000,
    );
    const revisions = async () =>
      (await env.http.list<KubeObject>(CONTROLLER_REVISIONS, { namespace: ns })).items.map(
        (r) => r.metadata.name,
      );
    const sts = (await getOrUndefined<V1StatefulSet & KubeObject>(
      env.http,
      STATEFULSETS,
      ns,
      'steady',
    )) as V1StatefulSet;
    const pod = (await getOrUndefined<V1Pod & KubeObject>(env.http, PODS, ns, 'steady-0')) as V1Pod;
    const before = {
      revisions: await revisions(),
      generation: sts.metadata?.generation,
      pod: pod.metadata?.uid,
    };
    assert.equal(before.revisions.length, 1);
    await operator.stop();

    operator = env.startOperator(secondBuild);
    await eventually(
      'the second build reconciled (its label on the connection ConfigMap)',
      async () => {
        const cm = await getOrUndefined<V1ConfigMap & KubeObject>(
          env.http,
          CONFIGMAPS,
          ns,
          'steady-connection',
        );
        return cm?.metadata.labels?.[MARK] === 'true' ? cm : undefined;
      },
      operator,
      60_000,
    );
    const stsAfter = (await getOrUndefined<V1StatefulSet & KubeObject>(
      env.http,
      STATEFULSETS,
      ns,
      'steady',
    )) as V1StatefulSet;
    const podAfter = (await getOrUndefined<V1Pod & KubeObject>(env.http, PODS, ns, 'steady-0')) as V1Pod;
    assert.deepEqual(
      {
        revisions: await revisions(),
        generation: stsAfter.metadata?.generation,
        pod: podAfter.metadata?.uid,
      },
      before,
    );
  });
});
