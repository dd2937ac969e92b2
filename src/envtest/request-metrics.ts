// The apiserver's request counter (apiserver_request_total), read from its /metrics: the one count of requests that
// covers every client, so tests and benchmarks can say how many requests of a kind were made over an interval.

export interface RequestSeries {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly code: string;
  readonly count: number;
}

/** The verbs that change stored state (SSA is counted as APPLY, a merge/JSON patch as PATCH). */
export const writeVerbs: ReadonlySet<string> = new Set([
  'POST',
  'PUT',
  'PATCH',
  'APPLY',
  'DELETE',
  'DELETECOLLECTION',
]);

const seriesLine = /^apiserver_request_total\{([^}]*)\}\s+(\S+)/;
const label = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Parses the apiserver_request_total series out of a Prometheus text exposition. */
export function parseRequestCounts(text: string): RequestSeries[] {
  const out: RequestSeries[] = [];
  for (const line of text.split('\n')) {
    const match = seriesLine.exec(line);
    if (!match) continue;
    const labels = new Map<string, string>();
    for (const [, name, value] of match[1]!.matchAll(label)) labels.set(name!, value!);
    out.push({
      verb: labels.get('verb') ?? '',
      group: labels.get('group') ?? '',
      resource: labels.get('resource') ?? '',
      subresource: labels.get('subresource') ?? '',
      code: labels.get('code') ?? '',
      count: Number(match[2]),
    });
  }
  return out;
}

const seriesKey = (s: RequestSeries): string =>
  [s.verb, s.group, s.resource, s.subresource, s.code].join('\u0000');

/** What each series grew by between two readings (series that did not grow are left out). */
export function requestDelta(
  before: readonly RequestSeries[],
  after: readonly RequestSeries[],
): RequestSeries[] {
  const earlier = new Map(before.map((s) => [seriesKey(s), s.count]));
  return after
    .map((s) => ({ ...s, count: s.count - (earlier.get(seriesKey(s)) ?? 0) }))
    .filter((s) => s.count > 0);
}

/** The total of the series that match. */
export function sumRequests(
  series: readonly RequestSeries[],
  matches: (s: RequestSeries) => boolean = () => true,
): number {
  return series.filter(matches).reduce((sum, s) => sum + s.count, 0);
}

/** e.g. `LIST persistentvolumeclaims 3, APPLY apps/statefulsets 1`, for assertion messages and reports. */
export function describeRequests(series: readonly RequestSeries[]): string {
  return series
    .map((s) => {
      const resource = `${s.group ? `${s.group}/` : ''}${s.resource}${s.subresource ? `/${s.subresource}` : ''}`;
      return `${s.verb} ${resource} ${s.count}`;
    })
    .join(', ');
}
