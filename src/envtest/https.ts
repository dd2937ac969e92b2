import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { Pki } from './pki.ts';

export interface AdminHttpsClient {
  get(url: string, timeoutMs: number): Promise<{ status: number; body: string }>;
}

/** A minimal HTTPS client authenticated with the admin certificate, for readiness probes. */
export async function adminHttpsClient(pki: Pki): Promise<AdminHttpsClient> {
  const [ca, cert, key] = await Promise.all([
    readFile(pki.caCert),
    readFile(pki.adminCert),
    readFile(pki.adminKey),
  ]);
  return {
    get: (url, timeoutMs) =>
      new Promise((resolve, reject) => {
        const req = request(url, { ca, cert, key, timeout: timeoutMs, agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
        req.on('error', reject);
        req.end();
      }),
  };
}
