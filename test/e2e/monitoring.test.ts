// The exporter sidecar on a real node: a SampleDB with spec.monitoring.exporter runs Debian's postgres_exporter
// (scripts/build-images.sh postgres-exporter) next to a real PostgreSQL under PodSecurity restricted; the role Job
// really creates the monitoring role with the operator's generated password; the exporter, scraped at the pod's
// address, reports the server up and every database metric the dashboard uses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dashboardMetricNames } from '../../src/constructs/index.ts';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import { apply, kubectlJson, sampleDb, waitReady } from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-monitoring');
const name = 'metered';
const EXPORTER_IMAGE = 'localhost/postgres-exporter:envtest';

describe('the postgres_exporter sidecar on a real node', () => {
  it('becomes Ready with the sidecar, and the exporter logs in as the monitoring role', async () => {
    await apply(cluster, [
      sampleDb(namespace, name, {
        version: '15',
        storage: { size: '300Mi' },
        deletion: { policy: 'Delete', protection: false },
        monitoring: { exporter: { enabled: true, image: EXPORTER_IMAGE } },
      }),
    ]);
    await waitReady(cluster, namespace, name, { timeoutMs: 300_000 });
    type Pod = {
      status: { podIP?: string; containerStatuses?: { name: string; ready: boolean }[] };
    };
    const pod = await kubectlJson<Pod>(cluster, ['get', 'pod', `${name}-0`, '-n', namespace]);
    assert.deepEqual(pod?.status.containerStatuses?.map((c) => `${c.name}:${c.ready}`).sort(), [
      'exporter:true',
      'postgres:true',
    ]);
    type Jobs = { items: { metadata: { name: string }; status: { succeeded?: number } }[] };
    await pollUntil(
      'the monitoring role Job succeeded',
      async () => {
        const jobs = await kubectlJson<Jobs>(cluster, ['get', 'jobs', '-n', namespace]);
        return jobs?.items.some(
          (j) => j.metadata.name.startsWith(`${name}-monitoring-`) && (j.status.succeeded ?? 0) > 0,
        )
          ? true
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    // The node's pod network is a bridge on this machine: the pod's address is reachable from here, as from Prometheus.
    const url = `http://${pod?.status.podIP}:9187/metrics`;
    const wanted = dashboardMetricNames().filter((n) => n.startsWith('pg_'));
    let last = '';
    await pollUntil(
      'the exporter to report pg_up 1 and the dashboard metrics',
      async () => {
        last = await fetch(url)
          .then((r) => r.text())
          .catch(() => '');
        const up = /^pg_up 1$/m.test(last);
        return up && wanted.every((n) => new RegExp(`^${n}[ {]`, 'm').test(last)) ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    ).catch((err) => {
      const missing = wanted.filter((n) => !new RegExp(`^${n}[ {]`, 'm').test(last));
      assert.fail(`${err}; pg_up: ${/^pg_up .*$/m.exec(last)?.[0]}; missing: ${missing.join(', ')}`);
    });
  });
});
