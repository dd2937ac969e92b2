// Least privilege, measured: the accesses the operator's ServiceAccount made (from the apiserver's audit log) against
// what src/api/permissions.ts grants it. Nothing it used may have been denied; nothing may be granted that it never
// used, unless GRANTED_UNUSED says why.
import {
  CLUSTER_RULES,
  OPERATOR_NAMESPACE_RULES,
  type PolicyRule,
  WATCHED_NAMESPACE_RULES,
} from '../../src/api/index.ts';
import { type AccessRecord, accessKey } from '../../src/envtest/index.ts';

/** One verb on one resource (subresource as `resource/sub`), as RBAC grants it. */
export interface Grant {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly why: string;
}

export const grantKey = (g: { verb: string; group: string; resource: string }): string =>
  `${g.verb} ${g.group || 'core'}/${g.resource}`;

export function grantsOf(rules: readonly PolicyRule[]): Grant[] {
  return rules.flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) =>
        rule.verbs.map((verb) => ({ verb, group, resource, why: rule.why })),
      ),
    ),
  );
}

export const OPERATOR_GRANTS: readonly Grant[] = grantsOf([
  ...WATCHED_NAMESPACE_RULES,
  ...CLUSTER_RULES,
  ...OPERATOR_NAMESPACE_RULES,
]);

/**
 * Granted although no request of the operator uses them, each with the reason. Keyed by {@link grantKey}.
 */
const SNAPSHOTS_ONLY =
  'used only where the cluster serves snapshot.storage.k8s.io; the e2e node does not ' +
  '(test/integration/sampledb/snapshot-deletion.test.ts runs that path)';

export const GRANTED_UNUSED: Readonly<Record<string, string>> = {
  'update sampledb.io/sampledbs/finalizers':
    'never a request: OwnerReferencesPermissionEnforcement admission (on in OpenShift, off in the test control ' +
    'plane) checks it when a child sets blockOwnerDeletion on its SampleDB owner reference',
  'delete sampledb.io/sampledbbackups':
    "deletion.policy Delete removes the SampleDB's backups (src/sampledb/deletion/step.ts); the e2e Delete case " +
    'has none to remove',
  'patch events.k8s.io/events':
    'a repeat of an Event within its series window patches the first one (src/runtime/client.ts); the e2e run may ' +
    'not repeat one in time',
  'create snapshot.storage.k8s.io/volumesnapshots': SNAPSHOTS_ONLY,
  'list snapshot.storage.k8s.io/volumesnapshots': SNAPSHOTS_ONLY,
  'watch snapshot.storage.k8s.io/volumesnapshots': SNAPSHOTS_ONLY,
  'list snapshot.storage.k8s.io/volumesnapshotclasses': SNAPSHOTS_ONLY,
  'watch snapshot.storage.k8s.io/volumesnapshotclasses': SNAPSHOTS_ONLY,
};

const resourceOf = (a: AccessRecord) => (a.subresource ? `${a.resource}/${a.subresource}` : a.resource);

export interface PrivilegeReport {
  /** Accesses the apiserver refused at least once. */
  readonly denied: readonly string[];
  /** Grants no access used and GRANTED_UNUSED does not explain (a `get` beside a `list` is never one). */
  readonly unused: readonly string[];
  /** GRANTED_UNUSED entries that are no longer granted: the list is stale. */
  readonly staleExceptions: readonly string[];
  /** GRANTED_UNUSED entries this run used after all (fine: the reasons say they are occasional). */
  readonly usedExceptions: readonly string[];
}

export function privilegeReport(
  accesses: readonly AccessRecord[],
  grants: readonly Grant[] = OPERATOR_GRANTS,
  exceptions: Readonly<Record<string, string>> = GRANTED_UNUSED,
): PrivilegeReport {
  const used = new Set(
    accesses.filter((a) => a.count > a.denied).map((a) => grantKey({ ...a, resource: resourceOf(a) })),
  );
  const granted = new Set(grants.map(grantKey));
  // `get` where `list` is granted adds no power (a list returns every object a get could): never counted unused.
  const impliedByList = (key: string) => key.startsWith('get ') && granted.has(`list ${key.slice(4)}`);
  const unused = [...granted]
    .filter((key) => !used.has(key) && !(key in exceptions) && !impliedByList(key))
    .sort();
  const staleExceptions = Object.keys(exceptions)
    .filter((key) => !granted.has(key))
    .sort();
  const usedExceptions = Object.keys(exceptions)
    .filter((key) => used.has(key))
    .sort();
  const denied = accesses
    .filter((a) => a.denied > 0)
    .map(
      (a) => `${accessKey(a)}: ${a.denied} of ${a.count} refused (${a.namespaces.join(', ') || 'cluster'})`,
    );
  return { denied, unused, staleExceptions, usedExceptions };
}
