// KubeHttp over its own node:https transport, against a loopback TLS server that stands in for the apiserver (not
// a real one: the integration tier covers that). Certificates come from the envtest PKI (the openssl CLI).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { generatePki } from '../../../src/envtest/pki.ts';
import type { ClusterAccess } from '../../../src/runtime/cluster-access.ts';
import { ApiError, KubeHttp } from '../../../src/runtime/http.ts';
import { CONFIG_MAPS } from '../../../src/runtime/kinds.ts';

describe('KubeHttp over TLS with a client certificate', () => {
  let dir: string;
  let server: Server;
  let access: ClusterAccess;
  let ca: string;
  let connections = 0;
  const seen: { cn: string | undefined; authorization: string | undefined; agent: string | undefined }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'transport-'));
    const pki = await generatePki(dir, '10.96.0.1');
    ca = await readFile(pki.caCert, 'utf8');
    server = createServer(
      {
        key: await readFile(pki.servingKey),
        cert: await readFile(pki.servingCert),
        ca,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        seen.push({
          cn: [socket.getPeerCertificate().subject?.CN].flat().join(','),
          authorization: req.headers.authorization,
          agent: req.headers['user-agent'],
        });
        const url = new URL(req.url ?? '/', 'https://x');
        if (url.searchParams.get('watch') === 'true') {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          // The first event split across two writes, then one that never ends its line until the client aborts.
          res.write('{"type":"ADDED","object":{"metadata":');
          res.write('{"name":"a"}}}\n{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}\n');
          return;
        }
        if (url.pathname.endsWith('/missing')) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end(
            JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'configmaps "missing" not found' }),
          );
          return;
        }
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(
            JSON.stringify({
              method: req.method,
              path: url.pathname,
              query: url.search,
              body,
              type: req.headers['content-type'],
            }),
          );
        });
      },
    );
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    access = {
      server: `https://127.0.0.1:${port}/`,
      tls: { ca, cert: await readFile(pki.adminCert, 'utf8'), key: await readFile(pki.adminKey, 'utf8') },
      credentials: async () => ({ Authorization: 'Bearer t0ken' }),
    };
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('authenticates with the certificate and the headers, and sends JSON bodies with their content type', async () => {
    const http = new KubeHttp(access, { userAgent: 'sampledb-operator/test' });
    const answer = await http.apply<never>(
      CONFIG_MAPS,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } },
      { fieldManager: 'm' },
    );
    assert.deepEqual(answer, {
      method: 'PATCH',
      path: '/api/v1/namespaces/ns/configmaps/c',
      query: '?fieldManager=m&force=true',
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}',
      type: 'application/apply-patch+yaml',
    });
    assert.deepEqual(seen.at(-1), {
      cn: 'envtest-admin',
      authorization: 'Bearer t0ken',
      agent: 'sampledb-operator/test',
    });
    await http.close();
  });

  it('keeps one connection for requests one after another', async () => {
    const http = new KubeHttp(access);
    const before = connections;
    for (let i = 0; i < 5; i++) await http.get(CONFIG_MAPS, { namespace: 'ns', name: `c${i}` });
    assert.equal(connections - before, 1);
    await http.close();
  });

  it('turns a non-2xx answer into an ApiError with the Status reason', async () => {
    const http = new KubeHttp(access);
    await assert.rejects(http.get(CONFIG_MAPS, { namespace: 'ns', name: 'missing' }), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 404);
      assert.equal(err.reason, 'NotFound');
      assert.match(err.message, /configmaps "missing" not found/);
      return true;
    });
    await http.close();
  });

  it('streams watch events across chunk boundaries, and aborting ends the stream with an AbortError', async () => {
    const http = new KubeHttp(access);
    const abort = new AbortController();
    const events = await http.watch(CONFIG_MAPS, { namespace: 'ns', signal: abort.signal });
    const got: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of events) {
          got.push(`${event.type} ${event.object.metadata.name}`);
          if (got.length === 2) abort.abort();
        }
      })(),
      { name: 'AbortError' },
    );
    assert.deepEqual(got, ['ADDED a', 'MODIFIED a']);
    await http.close();
  });

  it('refuses a server whose certificate does not chain to the configured CA', async () => {
    const http = new KubeHttp({ ...access, tls: { ...access.tls, ca: undefined } } as ClusterAccess);
    await assert.rejects(http.get(CONFIG_MAPS, { namespace: 'ns', name: 'c' }), /certificate/);
    await http.close();
  });
});
