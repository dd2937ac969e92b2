// Least privilege, measured by the apiserver itself: its audit log (Metadata level, the whole e2e run) lists every
// request the operator's ServiceAccount made. Nothing it asked for may have been refused, and nothing may be granted
// in src/api/permissions.ts that it never used, except the entries test/support/least-privilege.ts explains.
//
// Named to run last: the other files exercise the operator (databases, backups, deletion, faults) while this one
// waits, bounded, for their requests to appear in the log. Run alone, only the operator's start-up is in the log,
// so the unused-grant check is skipped then (the denial check still runs).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { accessesOf, accessKey, pollUntil, readAuditLog } from '../../src/envtest/index.ts';
import { privilegeReport } from '../support/least-privilege.ts';
import { e2eAuditLog, e2eCluster } from './support/cluster.ts';
import { OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE } from './support/install.ts';

await e2eCluster();
const audit = await e2eAuditLog();
/** How long to wait for the other files' requests; SAMPLEDB_PRIVILEGES_WAIT (seconds) shortens it for a survey. */
const waitSeconds = Number(process.env.SAMPLEDB_PRIVILEGES_WAIT ?? 15 * 60);
const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_DEPLOYMENT}`;

async function operatorAccesses() {
  assert.ok(audit, 'the e2e node writes an audit log');
  return accessesOf(await readAuditLog(audit.path), OPERATOR_USER);
}

describe('least privilege, measured by the audit log', () => {
  it('the operator made requests as its ServiceAccount, and none was refused', async () => {
    // Leader election runs with the synthesized RBAC: the Lease is read, watched and renewed.
    const accesses = await pollUntil(
      'the operator renewing its Lease',
      async () => {
        const found = await operatorAccesses();
        return found.some((a) => a.resource === 'leases' && a.verb === 'update' && a.count > a.denied)
          ? found
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    assert.ok(accesses.some((a) => a.resource === 'sampledbs' && a.verb === 'watch'));
    assert.deepEqual(privilegeReport(accesses).denied, []);
  });

  it('every grant was used, except those listed with a reason', {
    skip: audit?.ownNode ? 'run alone: only the operator start-up is in the log' : false,
  }, async () => {
    // The other files may still be running: wait (bounded) until their requests cover every grant.
    // On timeout the assertions below name what stayed unused.
    await pollUntil(
      'every grant used',
      async () => (privilegeReport(await operatorAccesses()).unused.length === 0 ? true : undefined),
      { timeoutMs: waitSeconds * 1000, intervalMs: 5000 },
    ).catch(() => undefined);
    const accesses = await operatorAccesses();
    const report = privilegeReport(accesses);
    // Kept after the run (the audit log goes with the node's temp dir): what a trim of permissions.ts starts from.
    writeFileSync(
      resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb', 'e2e-privileges.json'),
      JSON.stringify({ report, accesses }, null, 2),
    );
    const used = accesses.map((a) => `${accessKey(a)} ×${a.count}`).join('\n  ');
    assert.deepEqual(report.unused, [], `granted but never used; the operator used:\n  ${used}`);
    assert.deepEqual(report.staleExceptions, [], 'GRANTED_UNUSED explains a grant that is gone');
    assert.deepEqual(report.denied, []);
  });
});
