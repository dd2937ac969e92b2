// Retention enforced: planPrune's actions, and on the fake apiserver the dump files go first (a Job), then the
// SampleDBBackup objects, an Event each; the newest Completed backup and one a SampleDB restores from stay.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { planPrune } from '../../../../src/sampledb/backup/prune.ts';
import { SampleDbReconciler } from '../../../../src/sampledb/reconciler.ts';
import { JOBS, SAMPLEDB_BACKUPS, SAMPLEDBS } from '../../../../src/sampledb/resources.ts';
import { PRUNE_SCRIPT, pruneScriptEnv } from '../../../../src/sampledb/scripts/prune.ts';
import { sampleDb, sampleDbBackup } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';

const completed = (name: string, at: string, claim = 'orders-backups'): SampleDbBackupObject => {
  const b = sampleDbBackup(name, 'orders', {
    phase: 'Completed',
    completedAt: at,
    location: `pvc://${claim}/orders/${name}.dump`,
  });
  return { ...b, metadata: { ...b.metadata, namespace: 'shop', creationTimestamp: at } };
};

describe('planPrune', () => {
  const base = { dbName: 'orders', claimName: 'orders-backups', job: undefined };
  const backups = [completed('b1', '2026-01-01T00:00:00Z'), completed('b2', '2026-01-02T00:00:00Z')];

  it('removes the files first, then the objects; a failed Job keeps both', () => {
    assert.deepEqual(planPrune({ ...base, prune: ['b1'], backups }), {
      kind: 'run-job',
      names: ['b1'],
      paths: ['orders/b1.dump'],
    });
    assert.equal(planPrune({ ...base, prune: ['b1'], backups, job: 'running' }).kind, 'wait-job');
    assert.deepEqual(planPrune({ ...base, prune: ['b1'], backups, job: 'succeeded' }), {
      kind: 'delete-objects',
      names: ['b1'],
    });
    assert.equal(planPrune({ ...base, prune: ['b1'], backups, job: 'failed' }).kind, 'job-failed');
    assert.equal(planPrune({ ...base, prune: [], backups }).kind, 'none');
  });

  it('waits while a backup of the SampleDB is unfinished (it may be writing to the volume)', () => {
    const running = { ...sampleDbBackup('b3', 'orders', { phase: 'Running' }) };
    assert.deepEqual(planPrune({ ...base, prune: ['b1'], backups: [...backups, running] }), {
      kind: 'wait-backup',
      name: 'b3',
    });
  });

  it('keeps a backup whose dump is on another volume or at a path the operator did not write', () => {
    const elsewhere = completed('b0', '2025-12-01T00:00:00Z', 'old-claim');
    const odd = sampleDbBackup('b9', 'orders', {
      phase: 'Completed',
      location: 'pvc://orders-backups/../etc',
    });
    assert.equal(planPrune({ ...base, prune: ['b0', 'b9'], backups: [elsewhere, odd] }).kind, 'none');
  });
});

describe('the prune script', () => {
  const run = (root: string, paths: string[]) =>
    spawnSync('sh', ['-c', PRUNE_SCRIPT], {
      env: {
        ...pruneScriptEnv({ root, paths, terminationLog: join(root, 'termination') }),
        PATH: process.env.PATH,
      },
      encoding: 'utf8',
    });

  it('removes the dumps and their checksums, and refuses a path it did not write', () => {
    const root = mkdtempSync(join(tmpdir(), 'sampledb-prune-'));
    try {
      mkdirSync(join(root, 'orders'));
      for (const f of ['b1.dump', 'b1.dump.sha256', 'b2.dump']) writeFileSync(join(root, 'orders', f), 'x');
      const ok = run(root, ['orders/b1.dump', 'orders/gone.dump']);
      assert.equal(ok.status, 0, ok.stderr);
      assert.ok(!existsSync(join(root, 'orders', 'b1.dump')));
      assert.ok(!existsSync(join(root, 'orders', 'b1.dump.sha256')));
      assert.ok(existsSync(join(root, 'orders', 'b2.dump')));
      for (const bad of ['../orders/b2.dump', '/etc/passwd', 'orders/b2.sha256', 'orders/x/../b2.dump']) {
        const refused = run(root, [bad]);
        assert.notEqual(refused.status, 0, bad);
      }
      assert.ok(existsSync(join(root, 'orders', 'b2.dump')));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('retention on the fake apiserver', () => {
  const REQ = { namespace: 'shop', name: 'orders' };
  const rc = () => ({
    signal: new AbortController().signal,
    log: silentLogger,
    reconcileID: 't',
    retries: 0,
  });
  async function reconcile(api: FakeApiserver) {
    const { client, view } = api.operator();
    const now = () => new Date('2026-01-10T00:00:00Z');
    await new SampleDbReconciler({ client, view, now }).reconcile(REQ, rc());
  }

  it('keeps count backups: removes the older dumps with a Job, then their objects, one Event each', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb({ backup: { retention: { count: 1 } } }));
    api.put(SAMPLEDBS, sampleDb({ bootstrap: { fromBackup: { name: 'b2' } } }, { name: 'copy', uid: 'u2' }));
    for (const [name, day] of [
      ['b1', '01'],
      ['b2', '02'],
      ['b3', '03'],
      ['b4', '04'],
    ] as const)
      api.put(SAMPLEDB_BACKUPS, completed(name, `2026-01-${day}T00:00:00Z`));
    await reconcile(api);
    const jobs = api.list(JOBS).filter((j) => j.metadata.name?.startsWith('orders-prune-'));
    assert.equal(jobs.length, 1);
    const job = jobs[0] as V1Job & { metadata: { name: string } };
    const env = job.spec?.template.spec?.containers[0]?.env ?? [];
    assert.equal(env.find((e) => e.name === 'SAMPLEDB_PRUNE_PATHS')?.value, 'orders/b1.dump orders/b3.dump');
    assert.equal(api.list(SAMPLEDB_BACKUPS).length, 4, 'no object goes before its dump');

    api.put(JOBS, { ...job, status: { succeeded: 1 } });
    await reconcile(api);
    assert.deepEqual(
      api
        .list(SAMPLEDB_BACKUPS)
        .map((b) => b.metadata.name)
        .sort(),
      ['b2', 'b4'],
    );
    const notes = api.events.map((e) => (e as { note?: string }).note);
    assert.deepEqual(notes.filter((n) => n?.startsWith('Removed')).sort(), [
      'Removed SampleDBBackup b1 and its dump (spec.backup.retention).',
      'Removed SampleDBBackup b3 and its dump (spec.backup.retention).',
    ]);
    api.log.length = 0;
    await reconcile(api);
    assert.ok(!api.log.some((w) => w.verb === 'delete' || w.plural === 'jobs'), 'nothing more to remove');
  });
});
