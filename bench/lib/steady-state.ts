// The operator idle with N SampleDBs in place (all Ready, queues empty): what it asks of the apiserver and what it
// costs over an interval. Two counts of requests, because the apiserver's counter names no client: the apiserver's
// LISTs and writes over the interval (every client: kube-controller-manager, kube-scheduler, kwok and this bench's
// own watches too; Leases and Nodes left out, they are the components' heartbeats) and the operator's own
// rest_client_requests_total (its requests alone, by verb). The bench runs the operator without leader election,
// so it has no Lease to renew: its goal is 0 writes and 0 LISTs.
import { type ControlPlane, type RequestSeries, requestDelta, writeVerbs } from '../../src/envtest/index.ts';
import { type BenchOperator, metricSum } from './operator-process.ts';

export interface SteadyState {
  seconds: number;
  /** Requests the operator made, by verb (WATCH: a watch (re)opened; GET covers LISTs and single GETs). */
  operatorRequests: Record<string, number>;
  operatorWrites: number;
  /** Reconciles the operator ran (its resync re-queues every SampleDB every 10 minutes, from the cache). */
  reconciles: number;
  /** The apiserver's counter, every client: LISTs, and writes other than Leases and Nodes. */
  apiserverLists: RequestSeries[];
  apiserverWrites: RequestSeries[];
  rssStartBytes: number;
  rssEndBytes: number;
  rssPerSampleDbBytes: number;
  cpuSeconds: number;
  cpuSecondsPerSampleDbHour: number;
}

const heartbeat = (s: RequestSeries) => s.resource === 'leases' || s.resource === 'nodes';

function requestsByVerb(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const verb of ['GET', 'WATCH', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    out[verb] = metricSum(metrics, 'rest_client_requests_total', { method: verb });
  }
  return out;
}

export async function steadyState(
  plane: ControlPlane,
  operator: BenchOperator,
  sampleDbs: number,
  seconds: number,
): Promise<SteadyState> {
  const reconcileTotal = (m: string) =>
    metricSum(m, 'controller_runtime_reconcile_total', { controller: 'sampledb' });
  const beforeMetrics = await operator.metrics();
  const before = await plane.requestCounts();
  const cpuStart = await operator.cpuSeconds();
  const rssStart = await operator.rssBytes();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const cpuEnd = await operator.cpuSeconds();
  const rssEnd = await operator.rssBytes();
  const after = await plane.requestCounts();
  const afterMetrics = await operator.metrics();
  const delta = requestDelta(before, after);
  const start = requestsByVerb(beforeMetrics);
  const end = requestsByVerb(afterMetrics);
  const operatorRequests = Object.fromEntries(
    Object.keys(end).map((verb) => [verb, (end[verb] ?? 0) - (start[verb] ?? 0)]),
  );
  const cpuSeconds = cpuEnd - cpuStart;
  return {
    seconds: elapsed,
    operatorRequests,
    operatorWrites: ['POST', 'PUT', 'PATCH', 'DELETE'].reduce((n, v) => n + (operatorRequests[v] ?? 0), 0),
    reconciles: reconcileTotal(afterMetrics) - reconcileTotal(beforeMetrics),
    apiserverLists: delta.filter((s) => s.verb === 'LIST'),
    apiserverWrites: delta.filter((s) => writeVerbs.has(s.verb) && !heartbeat(s)),
    rssStartBytes: rssStart,
    rssEndBytes: rssEnd,
    rssPerSampleDbBytes: rssEnd / sampleDbs,
    cpuSeconds,
    cpuSecondsPerSampleDbHour: cpuSeconds / sampleDbs / (elapsed / 3600),
  };
}
