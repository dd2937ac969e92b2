import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { GROUP, VERSION } from '../api/index.ts';
import { operatorLabels } from './labels.ts';

export interface SampleDbDeletionProtectionProps {
  /** Name of the policy and its binding. Default: `sampledb-deletion-protection`. */
  readonly name?: string;
}

/**
 * A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) that refuses to delete a
 * SampleDB whose `spec.deletion.protection` is true. It runs in the apiserver, so it holds even when the operator
 * is down. Deleting the namespace of a protected SampleDB leaves the namespace Terminating until protection is
 * lifted, which is the point.
 */
export class SampleDbDeletionProtection extends Construct {
  constructor(scope: Construct, id: string, props: SampleDbDeletionProtectionProps = {}) {
    super(scope, id);
    const name = props.name ?? 'sampledb-deletion-protection';
    const labels = operatorLabels('admission');
    // A CEL double-quoted string; the JSON patch inside needs its quotes escaped for CEL.
    const message = String.raw`"SampleDB " + oldObject.metadata.name + " is protected (spec.deletion.protection: true). To delete it, first run: kubectl patch sampledb " + oldObject.metadata.name + " -n " + oldObject.metadata.namespace + " --type merge -p '{\"spec\":{\"deletion\":{\"protection\":false}}}'"`;
    new ApiObject(this, 'policy', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [GROUP], apiVersions: [VERSION], operations: ['DELETE'], resources: ['sampledbs'] },
          ],
        },
        validations: [
          {
            expression:
              '!has(oldObject.spec.deletion) || !has(oldObject.spec.deletion.protection) || !oldObject.spec.deletion.protection',
            messageExpression: message,
            reason: 'Forbidden',
          },
        ],
      },
    });
    new ApiObject(this, 'binding', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
  }
}
