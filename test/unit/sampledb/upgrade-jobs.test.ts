// The major upgrade's Jobs as built (pure): restricted pods, the data volume, the old installation for the Jobs that
// run pg_upgrade, and retries that never overlap a pod still working on the files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { upgradeJob } from '../../../src/sampledb/upgrade/jobs.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../support/sampledb.ts';

const route = { fromMajor: 15, toMajor: 17, fromImage: 'postgres:15', toImage: 'postgres:17' };
const instance = resolveInstance(sampleDb({ version: '17' }));

describe('upgrade Jobs', () => {
  for (const mode of ['preflight', 'upgrade', 'rollback', 'cleanup'] as const) {
    it(`${mode}: restricted, in the new image, a retry only once the previous pod has ended`, () => {
      const job = upgradeJob(instance, mode, route);
      const pod = job.spec?.template.spec;
      assert.ok(pod);
      assert.deepEqual(restrictedPodSpecViolations(pod), []);
      assert.equal(pod.containers[0]?.image, 'postgres:17');
      // A terminating pod may still write the files: its replacement waits for it (Job controller, GA in 1.34).
      assert.equal(job.spec?.podReplacementPolicy, 'Failed');
      assert.equal(job.spec?.backoffLimit, mode === 'preflight' ? 0 : 2);
      assert.equal(
        pod.initContainers?.[0]?.image,
        mode === 'preflight' || mode === 'upgrade' ? 'postgres:15' : undefined,
      );
    });
  }
});
