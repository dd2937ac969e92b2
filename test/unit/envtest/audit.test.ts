import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiserverArgs } from '../../../src/envtest/apiserver.ts';
import { type AuditEvent, accessesOf, accessKey, parseAuditLog } from '../../../src/envtest/audit.ts';
import type { Pki } from '../../../src/envtest/pki.ts';

const USER = 'system:serviceaccount:ops:operator';

const event = (patch: Partial<AuditEvent> & Pick<AuditEvent, 'verb'>): AuditEvent => ({
  stage: 'ResponseComplete',
  requestURI: '/x',
  user: { username: USER },
  objectRef: { resource: 'secrets', namespace: 'shop', apiGroup: '' },
  responseStatus: { code: 200 },
  ...patch,
});

describe('audit log', () => {
  it('adds the audit flags to kube-apiserver only when asked', () => {
    const base = {
      binary: 'kube-apiserver',
      port: 1,
      etcdUrl: 'http://127.0.0.1:2',
      pki: {} as Pki,
      serviceClusterIpRange: '10.96.0.0/12',
      serviceAccountAdmission: false,
    };
    assert.ok(!apiserverArgs(base).some((a) => a.startsWith('--audit')));
    const args = apiserverArgs({ ...base, audit: { policyFile: '/p.json', logFile: '/a.log' } });
    assert.ok(args.includes('--audit-policy-file=/p.json'));
    assert.ok(args.includes('--audit-log-path=/a.log'));
    assert.ok(args.includes('--audit-log-format=json'));
  });

  it('skips a torn last line', () => {
    const line = JSON.stringify(event({ verb: 'get' }));
    assert.equal(parseAuditLog(`${line}\n${line}\n{"stage":"Resp`).length, 2);
  });

  it('groups one user’s requests by verb, group, resource, subresource and scope, counting denials', () => {
    const events: AuditEvent[] = [
      event({ verb: 'get' }),
      event({ verb: 'get', objectRef: { resource: 'secrets', namespace: 'other', apiGroup: '' } }),
      event({
        verb: 'delete',
        responseStatus: { code: 403 },
        annotations: { 'authorization.k8s.io/decision': 'forbid' },
      }),
      event({ verb: 'list', objectRef: { resource: 'secrets', apiGroup: '' } }),
      event({
        verb: 'patch',
        objectRef: {
          resource: 'sampledbs',
          subresource: 'status',
          namespace: 'shop',
          apiGroup: 'sampledb.io',
        },
      }),
      // A watch: started (counted) and ended (not counted again); another user's request is not ours.
      event({ verb: 'watch', stage: 'ResponseStarted' }),
      event({ verb: 'watch' }),
      event({ verb: 'get', user: { username: 'admin' } }),
      event({ verb: 'get', stage: 'RequestReceived' }),
    ];
    const accesses = accessesOf(events, USER);
    assert.deepEqual(
      accesses.map((a) => [accessKey(a), a.count, a.denied]),
      [
        ['delete core/secrets (namespace)', 1, 1],
        ['get core/secrets (namespace)', 2, 0],
        ['list core/secrets (cluster)', 1, 0],
        ['patch sampledb.io/sampledbs/status (namespace)', 1, 0],
        ['watch core/secrets (namespace)', 1, 0],
      ],
    );
    assert.deepEqual(accesses.find((a) => a.verb === 'get')?.namespaces, ['other', 'shop']);
  });

  it('counts a watch the authorizer refused (it never starts)', () => {
    const refused = event({
      verb: 'watch',
      responseStatus: { code: 403 },
      annotations: { 'authorization.k8s.io/decision': 'forbid' },
    });
    assert.deepEqual(
      accessesOf([refused], USER).map((a) => [a.count, a.denied]),
      [[1, 1]],
    );
  });
});

describe('audit log: server-side apply', () => {
  it('a patch that created its object also used create; one refused for the create names create', () => {
    const created = event({ verb: 'patch', responseStatus: { code: 201 } });
    const refused = event({
      verb: 'patch',
      objectRef: { resource: 'configmaps', namespace: 'shop', apiGroup: '' },
      responseStatus: {
        code: 403,
        message: 'configmaps "x" is forbidden: User "u" cannot create resource "configmaps" in API group ""',
      },
    });
    const terminating = event({
      verb: 'create',
      responseStatus: {
        code: 403,
        message: 'unable to create new content in namespace shop because it is being terminated',
      },
    });
    assert.deepEqual(
      accessesOf([created, refused, terminating], USER).map((a) => [accessKey(a), a.count, a.denied]),
      [
        ['create core/configmaps (namespace)', 1, 1],
        ['create core/secrets (namespace)', 2, 0],
        ['patch core/secrets (namespace)', 1, 0],
      ],
    );
  });
});
