import { readFile, writeFile } from 'node:fs/promises';
import type { Pki } from './pki.ts';

/**
 * Renders an admin kubeconfig with the certificates embedded, so the file stays valid when copied
 * elsewhere (e.g. .sampledb/kubeconfig) and does not depend on the temp dir's layout.
 */
export async function renderAdminKubeconfig(server: string, pki: Pki, name = 'envtest'): Promise<string> {
  const [ca, cert, key] = await Promise.all(
    [pki.caCert, pki.adminCert, pki.adminKey].map(async (path) => (await readFile(path)).toString('base64')),
  );
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${name}-admin`,
    '  user:',
    `    client-certificate-data: ${cert}`,
    `    client-key-data: ${key}`,
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}-admin`,
    '    namespace: default',
    `current-context: ${name}`,
    '',
  ].join('\n');
}

export async function writeAdminKubeconfig(path: string, server: string, pki: Pki): Promise<void> {
  await writeFile(path, await renderAdminKubeconfig(server, pki), { mode: 0o600 });
}
