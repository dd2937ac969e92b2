import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbObject } from '../../../src/api/sampledb.ts';
import { age, statusView } from '../../../src/cli/status-view.ts';

const now = new Date('2026-12-03T12:00:00Z');

const db = (
  status: SampleDbObject['status'],
  spec: Record<string, unknown> = { version: '17', instances: 3 },
) =>
  ({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name: 'orders', namespace: 'shop', generation: 2 },
    spec,
    status,
  }) as unknown as SampleDbObject;

describe('kubectl sampledb status view', () => {
  it('shows phase, version, instances with roles, last backup and conditions in one view', () => {
    const text = statusView(
      db({
        phase: 'Ready',
        observedGeneration: 2,
        currentVersion: '17.2',
        endpoint: 'orders.shop.svc:5432',
        binding: { name: 'orders-binding' },
        lastBackup: { name: 'orders-nightly', completionTime: '2026-12-03T09:00:00Z' },
        replication: {
          primary: 'orders-1',
          term: 4,
          instances: [
            { name: 'orders-0', role: 'replica', ready: true, streaming: true, lagBytes: 0 },
            { name: 'orders-1', role: 'primary', ready: true },
            { name: 'orders-2', role: 'unknown', ready: false },
            {
              name: 'orders-3',
              role: 'replica',
              ready: true,
              streaming: false,
              notStreamingSince: '2026-12-03T11:59:30Z',
              lagBytes: 4096,
            },
          ],
        },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Available',
            message: 'accepting connections',
            lastTransitionTime: '2026-12-03T11:59:00Z',
          },
          { type: 'BackupHealthy', status: 'False', reason: 'BackupFailed', message: 'orders-x failed' },
        ] as never,
      }),
      now,
    );
    const lines = text.split('\n');
    assert.ok(lines.includes('Name:         shop/orders'), text);
    assert.ok(lines.includes('Phase:        Ready'), text);
    assert.ok(lines.includes('Version:      17 (running 17.2)'), text);
    assert.ok(lines.includes('Endpoint:     orders.shop.svc:5432'), text);
    assert.ok(lines.includes('Binding:      Secret orders-binding'), text);
    assert.ok(lines.includes('Last backup:  orders-nightly completed 2026-12-03T09:00:00Z (3h ago)'), text);
    assert.ok(lines.includes('Instances (4 of 3 requested; primary orders-1, term 4):'), text);
    assert.match(text, /^ {2}orders-0 +replica +yes +yes +0 B$/m);
    assert.match(text, /^ {2}orders-1 +primary \(elected\) +yes +- +-$/m);
    assert.match(text, /^ {2}orders-2 +unknown +no +- +-$/m);
    assert.match(text, /^ {2}orders-3 +replica +yes +no \(since 2026-12-03T11:59:30Z\) +4096 B$/m);
    assert.match(text, /^ {2}Ready +True +Available +60s +accepting connections$/m);
    assert.match(text, /^ {2}BackupHealthy +False +BackupFailed +orders-x failed$/m);
    assert.doesNotMatch(text, /Note:/);
  });

  it('says what is not reported yet rather than printing blanks', () => {
    const text = statusView(db(undefined, { version: '16' }), now);
    assert.match(text, /^Phase: +\(not reported yet\)$/m);
    assert.match(text, /^Version: +16$/m);
    assert.match(text, /^Last backup: +none$/m);
    assert.match(text, /^Instances: 1 requested; the operator reports no instances/m);
    assert.match(text, /^Conditions: none reported yet$/m);
  });

  it('flags a status older than the spec, and an election in progress', () => {
    const text = statusView(
      db({
        phase: 'Ready',
        observedGeneration: 1,
        replication: {
          primary: 'orders-2',
          handover: { from: 'orders-0', reason: 'Switchover', lsn: '0/3000060' },
          instances: [{ name: 'orders-0', role: 'primary', ready: true }],
        },
      }),
      now,
    );
    assert.match(text, /^Note: +status is for generation 1, the spec is at 2$/m);
    assert.match(text, /Switchover in progress from orders-0 \(target must reach 0\/3000060\)/);
  });

  it('writes ages as kubectl does', () => {
    assert.equal(age('2026-12-03T11:59:15Z', now), '45s');
    assert.equal(age('2026-12-03T11:30:00Z', now), '30m');
    assert.equal(age('2026-12-02T12:00:00Z', now), '24h');
    assert.equal(age('2026-11-28T12:00:00Z', now), '5d');
    assert.equal(age('not a time', now), '?');
  });
});
