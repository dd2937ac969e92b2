// Turns synthesized objects into @pulumi/kubernetes resources, in the creation order of `tierOf`.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { type Manifest, tierOf } from './manifests.ts';

type ResourceClass = new (
  name: string,
  args: Record<string, unknown>,
  opts?: pulumi.CustomResourceOptions,
) => pulumi.CustomResource;

// The typed classes carry the provider's type token (`kubernetes:core/v1:Namespace`), which a generic
// CustomResource would get wrong for the core group (`kubernetes:v1:Namespace`).
const TYPED: Record<string, ResourceClass> = {
  'v1/Namespace': k8s.core.v1.Namespace,
  'v1/ServiceAccount': k8s.core.v1.ServiceAccount,
  'v1/Service': k8s.core.v1.Service,
  'v1/ConfigMap': k8s.core.v1.ConfigMap,
  'v1/Secret': k8s.core.v1.Secret,
  'apps/v1/Deployment': k8s.apps.v1.Deployment,
  'policy/v1/PodDisruptionBudget': k8s.policy.v1.PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/ClusterRole': k8s.rbac.v1.ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': k8s.rbac.v1.ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': k8s.rbac.v1.Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': k8s.rbac.v1.RoleBinding,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': k8s.apiextensions.v1.CustomResourceDefinition,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy':
    k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding':
    k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
} as unknown as Record<string, ResourceClass>;

/**
 * The explicit `dependsOn` of a component's options as a list. A component's dependsOn does not hold back its
 * children, so components pass this on to every resource they create.
 */
export function dependsOnOf(opts: pulumi.ResourceOptions | undefined): pulumi.Resource[] {
  const dependsOn = opts?.dependsOn;
  if (dependsOn === undefined) return [];
  if (Array.isArray(dependsOn) && dependsOn.every((d) => pulumi.Resource.isInstance(d))) {
    return dependsOn as pulumi.Resource[];
  }
  if (pulumi.Resource.isInstance(dependsOn)) return [dependsOn];
  throw new Error(
    'dependsOn must be a resource or a list of resources (not an Output) for sampledb components',
  );
}

/** `prefix/Kind/namespace/name`: unique in the stack and readable in `pulumi preview`. */
export function logicalName(prefix: string, object: Manifest): string {
  const { name, namespace } = object.metadata;
  return [prefix, object.kind, ...(namespace ? [namespace] : []), name].join('/');
}

export interface DeployObjectsOptions {
  /** Parent component. Default: the stack. */
  readonly parent?: pulumi.Resource;
  /** Resources that must exist before any of these objects. */
  readonly dependsOn?: readonly pulumi.Resource[];
  /** Keep the object in the cluster when the resource is deleted (used for CRDs, see `retainCrdsOnDelete`). */
  readonly retainOnDelete?: boolean;
}

/** Creates one resource per object; each tier waits for the tiers before it. Returns them in object order. */
export function deployObjects(
  prefix: string,
  objects: readonly Manifest[],
  options: DeployObjectsOptions,
): pulumi.CustomResource[] {
  const created = new Map<Manifest, pulumi.CustomResource>();
  const earlier: pulumi.Resource[] = [...(options.dependsOn ?? [])];
  for (const tier of [0, 1, 2] as const) {
    const thisTier: pulumi.Resource[] = [];
    for (const object of objects.filter((o) => tierOf(o) === tier)) {
      const Class = TYPED[`${object.apiVersion}/${object.kind}`] ?? k8s.apiextensions.CustomResource;
      const resource = new Class(
        logicalName(prefix, object),
        { ...object },
        {
          ...(options.parent ? { parent: options.parent } : {}),
          dependsOn: [...earlier],
          // Every object has a fixed name, so a replacement must delete the old one first.
          deleteBeforeReplace: true,
          ...(options.retainOnDelete ? { retainOnDelete: true } : {}),
        },
      );
      created.set(object, resource);
      thisTier.push(resource);
    }
    earlier.push(...thisTier);
  }
  return objects.map((o) => created.get(o) as pulumi.CustomResource);
}
