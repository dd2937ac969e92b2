// Stopping writes for an in-place restore: the client Service selects no pod while the SampleDB carries the
// writes-stopped annotation, with the same selector keys as before (the selector is an atomic map and the apply-skip
// compares it key by key: an added key that is removed again would never be re-applied; seen on the real node).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { clientService, serviceSelectsNothing } from '../../../src/sampledb/services.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

describe('writes stopped', () => {
  const open = resolveInstance(sampleDb());
  const stopped = resolveInstance(sampleDb({}, { annotations: { 'sampledb.io/writes-stopped': 'undo' } }));

  it('selects no pod while stopped, the database pod again after, with the same keys', () => {
    const before = clientService(open).spec?.selector ?? {};
    const during = clientService(stopped).spec?.selector ?? {};
    assert.deepEqual(Object.keys(during).sort(), Object.keys(before).sort());
    const podLabels = statefulSet(open).spec?.template.metadata?.labels ?? {};
    const selects = (selector: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => podLabels[k] === v);
    assert.ok(selects(before));
    assert.ok(!selects(during), 'no database pod matches while writes are stopped');
    assert.equal(serviceSelectsNothing(clientService(stopped)), true);
    assert.equal(serviceSelectsNothing(clientService(open)), false);
  });
});
