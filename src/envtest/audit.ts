// The apiserver's audit log as a test instrument: a Metadata-level policy (who did what to which resource, and the
// answer; never a request or response body, so no Secret data lands in the file), the flags that write it to a
// file, and a reader that turns it into the set of accesses one user made, each with whether it was ever refused.
import { readFile } from 'node:fs/promises';

/** Every request at Metadata level, once it is answered (RequestReceived would log each request twice). */
export const METADATA_AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata' }],
} as const;

/** kube-apiserver flags for a JSON audit log; blocking, so an answered request is already in the file. */
export function auditArgs(policyFile: string, logFile: string): string[] {
  return [
    `--audit-policy-file=${policyFile}`,
    `--audit-log-path=${logFile}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
  ];
}

/** The fields of an audit.k8s.io/v1 Event that describe an access. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string; readonly groups?: readonly string[] };
  /** What the client sent as User-Agent: tells apart processes that share one identity. */
  readonly userAgent?: string;
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number; readonly message?: string };
  readonly annotations?: Readonly<Record<string, string>>;
  readonly requestReceivedTimestamp?: string;
  readonly stageTimestamp?: string;
}

/** Parses an audit log (one JSON event per line); a torn last line (the log is being written) is skipped. */
export function parseAuditLog(text: string): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line) as AuditEvent);
    } catch {
      // Only the line being written can be incomplete.
    }
  }
  return events;
}

export async function readAuditLog(path: string): Promise<AuditEvent[]> {
  return parseAuditLog(await readFile(path, 'utf8'));
}

/** One kind of access: what RBAC decides on. */
export interface Access {
  readonly verb: string;
  /** API group, '' for the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /** `namespace` when the request named a namespace, else `cluster` (e.g. a list across all namespaces). */
  readonly scope: 'namespace' | 'cluster';
}

export interface AccessRecord extends Access {
  /** How many requests made it. */
  readonly count: number;
  /** How many of them the authorizer refused (authorization.k8s.io/decision: forbid). */
  readonly denied: number;
  readonly namespaces: readonly string[];
}

export const accessKey = (a: Access): string =>
  `${a.verb} ${a.group || 'core'}/${a.resource}${a.subresource ? `/${a.subresource}` : ''} (${a.scope})`;

/**
 * Refused by authorization: by the authorizer before the handler (decision annotation), or by the check a handler
 * makes itself (server-side apply of an object that does not exist yet also needs `create`; RBAC's message says
 * "cannot <verb> resource"). Other 403s, such as a namespace being deleted, are not about permissions.
 */
const isDenied = (event: AuditEvent) =>
  event.annotations?.['authorization.k8s.io/decision'] === 'forbid' ||
  (event.responseStatus?.code === 403 && /cannot [a-z]+ resource/.test(event.responseStatus.message ?? ''));

/**
 * Whether this event stands for one request: a request logs ResponseComplete; a watch that opened logs
 * ResponseStarted too (and ResponseComplete only when it ends, maybe never), so an opened watch counts at its start.
 */
function countsOnce(event: AuditEvent): boolean {
  if (event.stage === 'ResponseStarted') return true;
  if (event.stage !== 'ResponseComplete') return false;
  return !(event.verb === 'watch' && (event.responseStatus?.code ?? 200) < 300);
}

/**
 * The verbs a request was authorized for: its own, and `create` for a patch that created the object (server-side
 * apply of a new object: the handler checks `create` itself, and the audit log shows only the patch, answered 201).
 */
function verbsOf(event: AuditEvent): string[] {
  if (event.verb !== 'patch') return [event.verb];
  if (event.responseStatus?.code === 201) return ['patch', 'create'];
  // Refused for the create it would have been: the grant missing is `create`.
  if (isDenied(event) && /cannot create resource/.test(event.responseStatus?.message ?? ''))
    return ['create'];
  return ['patch'];
}

/** Every resource access `username` made, one record per (verb, group, resource, subresource, scope). */
export function accessesOf(events: readonly AuditEvent[], username: string): AccessRecord[] {
  const records = new Map<
    string,
    { access: Access; count: number; denied: number; namespaces: Set<string> }
  >();
  const add = (event: AuditEvent, verb: string): void => {
    const ref = event.objectRef ?? {};
    const access: Access = {
      verb,
      group: ref.apiGroup ?? '',
      resource: ref.resource ?? '',
      subresource: ref.subresource ?? '',
      scope: ref.namespace ? 'namespace' : 'cluster',
    };
    const key = accessKey(access);
    const record = records.get(key) ?? { access, count: 0, denied: 0, namespaces: new Set<string>() };
    record.count++;
    if (isDenied(event)) record.denied++;
    if (ref.namespace) record.namespaces.add(ref.namespace);
    records.set(key, record);
  };
  for (const event of events) {
    if (event.user.username !== username || !event.objectRef?.resource) continue;
    if (!countsOnce(event)) continue;
    for (const verb of verbsOf(event)) add(event, verb);
  }
  return [...records.values()]
    .map(({ access, count, denied, namespaces }) => ({
      ...access,
      count,
      denied,
      namespaces: [...namespaces].sort(),
    }))
    .sort((a, b) => accessKey(a).localeCompare(accessKey(b)));
}
