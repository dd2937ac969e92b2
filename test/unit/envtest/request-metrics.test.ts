import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describeRequests,
  parseRequestCounts,
  requestDelta,
  sumRequests,
  writeVerbs,
} from '../../../src/envtest/request-metrics.ts';

const exposition = (
  pvcLists: number,
  applies: number,
) => `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="persistentvolumeclaims",scope="cluster",subresource="",verb="LIST",version="v1"} ${pvcLists}
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="statefulsets",scope="resource",subresource="",verb="APPLY",version="v1"} ${applies}
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 7
apiserver_request_duration_seconds_bucket{verb="LIST",le="0.1"} 99
`;

describe('apiserver request counter', () => {
  it('parses every apiserver_request_total series and nothing else', () => {
    const series = parseRequestCounts(exposition(3, 2));
    assert.deepEqual(series, [
      { verb: 'LIST', group: '', resource: 'persistentvolumeclaims', subresource: '', code: '200', count: 3 },
      { verb: 'APPLY', group: 'apps', resource: 'statefulsets', subresource: '', code: '200', count: 2 },
      { verb: 'POST', group: '', resource: 'pods', subresource: 'binding', code: '201', count: 7 },
    ]);
  });

  it('reports only the series that grew, by how much', () => {
    const delta = requestDelta(parseRequestCounts(exposition(3, 2)), parseRequestCounts(exposition(3, 5)));
    assert.equal(describeRequests(delta), 'APPLY apps/statefulsets 3');
    assert.equal(
      sumRequests(delta, (s) => writeVerbs.has(s.verb)),
      3,
    );
  });

  it('counts a series absent from the first reading in full', () => {
    const delta = requestDelta([], parseRequestCounts(exposition(3, 0)));
    assert.equal(describeRequests(delta), 'LIST persistentvolumeclaims 3, POST pods/binding 7');
  });
});
