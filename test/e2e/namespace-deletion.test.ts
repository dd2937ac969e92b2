// Deleting the namespace of a SampleDB that holds rows (deletion.policy Snapshot, the default): the namespace refuses
// the final backup, so the operator keeps the data on its PersistentVolume (reclaimPolicy Retain) before it releases
// the claim. Afterwards the rows are read back from that volume, bound to a new claim in another namespace, by a
// PostgreSQL started on it: the same per-table checksums as before the deletion.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../src/envtest/real-node/images.ts';
import { e2eCluster, e2eNamespace } from './support/cluster.ts';
import {
  apply,
  CHECKSUM_SQL,
  kubectlJson,
  kubectlOk,
  parseChecksums,
  restrictedClient,
  SEED_SQL,
  sampleDb,
  sql,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const cluster = await e2eCluster();

interface Pv {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string;
    capacity?: { storage?: string };
  };
  status?: { phase?: string };
}

/** Runs PostgreSQL on the claim's files (socket only, trust on it) and prints the per-table checksums of `app`. */
async function checksumsOnVolume(namespace: string, claim: string): Promise<Record<string, string>> {
  const name = `read-${randomBytes(3).toString('hex')}`;
  const script = [
    'set -e',
    "printf 'local all all trust\\n' > /tmp/hba.conf",
    `pg_ctl -D /var/lib/postgresql/data/pgdata -l /tmp/pg.log -w -t 60 -o "-c listen_addresses='' -c unix_socket_directories=/tmp -c hba_file=/tmp/hba.conf" start > /dev/null || { cat /tmp/pg.log; exit 1; }`,
    `psql -h /tmp -U postgres -d app -X -q -At -v ON_ERROR_STOP=1 <<'SQL'\n${CHECKSUM_SQL}\nSQL`,
    'pg_ctl -D /var/lib/postgresql/data/pgdata -m fast -w stop > /dev/null',
  ].join('\n');
  await apply(cluster, [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: {
        restartPolicy: 'Never',
        // No fsGroup: the files are uid 999's already, and a recursive group change would loosen PGDATA's mode,
        // which PostgreSQL refuses.
        securityContext: restrictedClient.securityContext,
        containers: [
          {
            name: 'postgres',
            image: `${LOCAL_POSTGRES_REPOSITORY}:15`,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', script],
            securityContext: restrictedClient.container,
            volumeMounts: [
              { name: 'data', mountPath: '/var/lib/postgresql/data' },
              { name: 'tmp', mountPath: '/tmp' },
            ],
          },
        ],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: claim } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
    },
  ]);
  const phase = await pollUntil(
    `pod ${name} finished`,
    async () => {
      const pod = await kubectlJson<{ status?: { phase?: string } }>(cluster, [
        'get',
        'pod',
        name,
        '-n',
        namespace,
      ]);
      const p = pod?.status?.phase;
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const logs = await kubectlOk(cluster, ['logs', name, '-n', namespace]);
  assert.equal(phase, 'Succeeded', logs);
  return parseChecksums(logs);
}

describe('deleting the namespace of a SampleDB holding rows', () => {
  it('keeps the data on a Retain PersistentVolume, and the rows read back from it are the same', async () => {
    // A namespace of its own, created here and deleted by the test (e2eNamespace also deletes it afterwards).
    const namespace = await e2eNamespace(cluster, 'e2e-nsdel');
    await apply(cluster, [
      sampleDb(namespace, 'orders', {
        version: '15',
        storage: { size: '1Gi' },
        deletion: { protection: false },
      }),
    ]);
    await waitReady(cluster, namespace, 'orders');
    await sql(cluster, namespace, 'orders', SEED_SQL);
    const before = await tableChecksums(cluster, namespace, 'orders');
    assert.ok(Object.keys(before).length >= 2, JSON.stringify(before));
    const pvc = await kubectlJson<{ metadata: { finalizers?: string[] }; spec: { volumeName: string } }>(
      cluster,
      ['get', 'pvc', 'data-orders-0', '-n', namespace],
    );
    assert.ok(
      pvc?.metadata.finalizers?.includes('sampledb.io/data-protection'),
      JSON.stringify(pvc?.metadata),
    );
    const pvName = pvc?.spec.volumeName ?? '';
    assert.ok(pvName, 'the data claim is bound');

    await kubectlOk(cluster, ['delete', 'namespace', namespace, '--wait=false']);
    await pollUntil(
      `namespace ${namespace} gone`,
      async () => ((await kubectlJson(cluster, ['get', 'namespace', namespace])) ? undefined : true),
      { timeoutMs: 300_000, intervalMs: 1000 },
    );

    const pv = await kubectlJson<Pv>(cluster, ['get', 'pv', pvName]);
    assert.equal(pv?.spec.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(pv?.status?.phase, 'Released');
    assert.equal(pv?.metadata.labels?.['sampledb.io/retained'], 'true');
    assert.equal(pv?.metadata.annotations?.['sampledb.io/retained-from'], `${namespace}/orders`);
    assert.match(
      pv?.metadata.annotations?.['sampledb.io/retained-because'] ?? '',
      /^(ClaimDeleting|NamespaceTerminating|WorkloadGone)$/,
    );
    const events = await kubectlJson<{
      items: { reason?: string; regarding?: { name?: string }; note?: string }[];
    }>(cluster, ['get', 'events.events.k8s.io', '-n', 'default']);
    const event = events?.items.find((e) => e.reason === 'VolumeRetained' && e.regarding?.name === pvName);
    assert.ok(event, 'a VolumeRetained Event on the PersistentVolume, in default');

    // Recovery, as docs/runbooks.md says: free the volume from its old claim and bind a new claim to it by name.
    await kubectlOk(cluster, [
      'patch',
      'pv',
      pvName,
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/spec/claimRef"}]',
    ]);
    const recovery = await e2eNamespace(cluster, 'e2e-nsdel-read');
    await apply(cluster, [
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'recovered', namespace: recovery },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: pv?.spec.storageClassName ?? '',
          volumeName: pvName,
          resources: { requests: { storage: pv?.spec.capacity?.storage ?? '1Gi' } },
        },
      },
    ]);
    assert.deepEqual(await checksumsOnVolume(recovery, 'recovered'), before);
    // The test's own clean-up: the claim goes with its namespace; the retained volume is deleted by hand, as a user would.
    await kubectlOk(cluster, ['delete', 'namespace', recovery, '--wait=true', '--timeout=120s']);
    await kubectlOk(cluster, ['delete', 'pv', pvName, '--wait=false']);
  });
});
