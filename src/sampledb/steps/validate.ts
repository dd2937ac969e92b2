// The spec is checked with the same validator the CRD is built from: an object that slipped past admission (written
// before a CRD upgrade, or with admission bypassed) becomes a Failed status naming the fields, not a crash loop.
import { sampleDbValidator } from '../../api/index.ts';
import type { Step } from './context.ts';

export const validateSpec: Step = {
  name: 'validate-spec',
  writes: [],
  async run({ instance }) {
    const db = instance.object;
    const errors = sampleDbValidator.validate({
      apiVersion: db.apiVersion,
      kind: db.kind,
      metadata: { name: db.metadata.name, namespace: db.metadata.namespace },
      spec: db.spec,
    });
    if (errors.length === 0) return undefined;
    // No requeue: only an edit of the spec can fix it, and an edit triggers a reconcile.
    return { observed: { specErrors: errors }, halt: true };
  },
};
