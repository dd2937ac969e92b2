// Least-privilege RBAC for the controller, rendered from the permissions table in src/api/permissions.ts.

import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import {
  CLUSTER_RULES,
  OPERATOR_NAMESPACE_RULES,
  type PolicyRule,
  WATCHED_NAMESPACE_RULES,
} from '../api/index.ts';
import { operatorLabels } from './labels.ts';

export interface OperatorRbacProps {
  /** Name prefix for the roles. */
  readonly name: string;
  /** Namespace of the operator (its ServiceAccount and its leader-election Lease). */
  readonly namespace: string;
  /** ServiceAccount the controller runs as. */
  readonly serviceAccountName: string;
  /**
   * Namespaces to watch. Empty (the default): all namespaces, through one ClusterRole.
   * Otherwise one Role + RoleBinding per namespace, and a ClusterRole for the cluster-scoped
   * rules only (reads, and the PersistentVolume patch).
   */
  readonly watchNamespaces?: readonly string[];
}

function toRbacRules(rules: readonly PolicyRule[]): k8s.PolicyRule[] {
  return rules.map((rule) => ({
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    verbs: [...rule.verbs],
    ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
  }));
}

/** Roles and bindings that grant the controller exactly what it uses, and nothing through wildcards. */
export class OperatorRbac extends Construct {
  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const labels = operatorLabels('rbac');
    const subjects = [{ kind: 'ServiceAccount', name: props.serviceAccountName, namespace: props.namespace }];
    const watchNamespaces = props.watchNamespaces ?? [];
    const clusterWide = watchNamespaces.length === 0;

    const clusterRules = clusterWide ? [...WATCHED_NAMESPACE_RULES, ...CLUSTER_RULES] : CLUSTER_RULES;
    const clusterRoleName = clusterWide ? props.name : `${props.name}-cluster-read`;
    new k8s.KubeClusterRole(this, 'cluster-role', {
      metadata: { name: clusterRoleName, labels },
      rules: toRbacRules(clusterRules),
    });
    new k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', {
      metadata: { name: clusterRoleName, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRoleName },
      subjects,
    });

    for (const namespace of watchNamespaces) {
      new k8s.KubeRole(this, `role-${namespace}`, {
        metadata: { name: props.name, namespace, labels },
        rules: toRbacRules(WATCHED_NAMESPACE_RULES),
      });
      new k8s.KubeRoleBinding(this, `role-binding-${namespace}`, {
        metadata: { name: props.name, namespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: props.name },
        subjects,
      });
    }

    const electionRole = `${props.name}-leader-election`;
    new k8s.KubeRole(this, 'leader-election-role', {
      metadata: { name: electionRole, namespace: props.namespace, labels },
      rules: toRbacRules(OPERATOR_NAMESPACE_RULES),
    });
    new k8s.KubeRoleBinding(this, 'leader-election-binding', {
      metadata: { name: electionRole, namespace: props.namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: electionRole },
      subjects,
    });
  }
}
