import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodSpec } from '@kubernetes/client-node';
import { backupJob } from '../../../src/sampledb/backup-job.ts';
import { initJob } from '../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../support/sampledb.ts';

const db = sampleDb({ bootstrap: { initSQL: { name: 'orders-sql' } } });
const backup = {
  apiVersion: 'sampledb.io/v1alpha1' as const,
  kind: 'SampleDBBackup' as const,
  metadata: { name: 'nightly', namespace: 'shop', uid: 'b-uid' },
  spec: { sampleDB: { name: 'orders' } },
};

const podTemplates: Array<[string, V1PodSpec | undefined]> = [
  ['StatefulSet', statefulSet(resolveInstance(db)).spec?.template.spec],
  ['init Job', initJob(resolveInstance(db)).spec?.template.spec],
  [
    'init Job restoring a backup',
    initJob(resolveInstance(db), { claimName: 'orders-backups', path: 'orders/x.dump' }).spec?.template.spec,
  ],
  ['backup Job', backupJob(resolveInstance(db), backup).spec?.template.spec],
];

describe('PodSecurity restricted', () => {
  for (const [what, spec] of podTemplates) {
    it(`${what} meets the restricted profile with a read-only root filesystem`, () => {
      assert.ok(spec);
      assert.deepEqual(restrictedPodSpecViolations(spec), []);
      assert.equal(spec.securityContext?.runAsUser, 999);
      assert.equal(spec.securityContext?.fsGroup, 999);
    });
  }

  it('the checker catches what the profile forbids', () => {
    const bad: V1PodSpec = {
      hostNetwork: true,
      volumes: [{ name: 'host', hostPath: { path: '/' } }],
      containers: [
        {
          name: 'c',
          ports: [{ containerPort: 80, hostPort: 80 }],
          securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] }, runAsUser: 0 },
        },
      ],
    };
    const problems = restrictedPodSpecViolations(bad).join('\n');
    for (const expected of [
      'host namespaces',
      'hostPath',
      'privileged',
      'allowPrivilegeEscalation',
      'runAsNonRoot',
      'runAsUser must not be 0',
      'seccompProfile',
      'drop ALL',
      'SYS_ADMIN',
      'hostPort',
      'readOnlyRootFilesystem',
    ]) {
      assert.ok(problems.includes(expected), `expected a violation about ${expected}:\n${problems}`);
    }
  });
});
