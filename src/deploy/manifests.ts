// The Kubernetes objects the Pulumi stack deploys, synthesized in-process from the project's cdk8s constructs:
// the same code that writes dist/, so the manifests exist once. Pure (no Pulumi), so it is unit-tested directly.
import { App, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { type KubeObject, LABELS, OPERATOR_NAME } from '../api/index.ts';
import {
  SampleDb,
  SampleDbCrds,
  SampleDbOperator,
  type SampleDbOperatorProps,
  type SampleDbProps,
} from '../constructs/index.ts';

/** A synthesized manifest: the one Kubernetes object type, with the name, kind and fields cdk8s always emits. */
export type Manifest = KubeObject & {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
};

/**
 * Stands in for the image while synthesizing: the real reference is a Pulumi output (a digest known only after the
 * build), substituted into the objects by {@link substitute}.
 */
export const IMAGE_PLACEHOLDER = 'sampledb-operator-image-placeholder';

function synth(build: (chart: Chart) => void): Manifest[] {
  const chart = new Chart(new App(), 'stack');
  build(chart);
  return chart.toJson() as Manifest[];
}

export function crdObjects(): Manifest[] {
  return synth((chart) => new SampleDbCrds(chart, 'crds'));
}

/** The operator's objects with {@link IMAGE_PLACEHOLDER} as the image. */
export function operatorObjects(props: Omit<SampleDbOperatorProps, 'image'>): Manifest[] {
  return synth((chart) => new SampleDbOperator(chart, 'operator', { ...props, image: IMAGE_PLACEHOLDER }));
}

export function sampleDbObjects(props: SampleDbProps & { readonly name: string }): Manifest[] {
  return synth((chart) => new SampleDb(chart, props.name, props));
}

/** Namespaces for SampleDB instances, labelled for PodSecurity `restricted` like the operator's own. */
export function namespaceObjects(names: readonly string[]): Manifest[] {
  return synth((chart) => {
    for (const name of names) {
      new k8s.KubeNamespace(chart, name, {
        metadata: {
          name,
          labels: {
            [LABELS.partOf]: OPERATOR_NAME,
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      });
    }
  });
}

/** A deep copy of `value` where every string equal to `placeholder` is `replacement` (which may be an Output). */
export function substitute<T>(value: T, placeholder: string, replacement: unknown): T {
  const visit = (node: unknown): unknown => {
    if (node === placeholder) return replacement;
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v)]));
    }
    return node;
  };
  return visit(value) as T;
}

/**
 * Creation order inside one set of objects. Pulumi creates resources in parallel unless told otherwise, so:
 * 0. namespaces and CRDs (everything else may live in them or be one of their kind);
 * 1. identity and configuration: ServiceAccounts, RBAC, ConfigMaps, Secrets, admission policies, so the
 *    controller never starts without its permissions;
 * 2. the rest: workloads, Services (their await needs the pods, so nothing may wait on a Service), custom resources.
 */
export function tierOf(object: Pick<Manifest, 'kind'>): 0 | 1 | 2 {
  switch (object.kind) {
    case 'Namespace':
    case 'CustomResourceDefinition':
      return 0;
    case 'ServiceAccount':
    case 'ClusterRole':
    case 'ClusterRoleBinding':
    case 'Role':
    case 'RoleBinding':
    case 'ConfigMap':
    case 'Secret':
    case 'ValidatingAdmissionPolicy':
    case 'ValidatingAdmissionPolicyBinding':
      return 1;
    default:
      return 2;
  }
}
