import { readFile, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { Pki } from './pki.ts';

export interface AdminCredentials {
  readonly server: string;
  /** Base64 of the PEM files, as kubeconfig's `*-data` fields take them. */
  readonly caData: string;
  readonly certData: string;
  readonly keyData: string;
}

/** The kubeconfig for `credentials`: one cluster, one user, one context named after `name`. */
export function adminKubeconfig(credentials: AdminCredentials, name = 'envtest'): string {
  const user = `${name}-admin`;
  return stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name, cluster: { server: credentials.server, 'certificate-authority-data': credentials.caData } },
      ],
      users: [
        {
          name: user,
          user: { 'client-certificate-data': credentials.certData, 'client-key-data': credentials.keyData },
        },
      ],
      contexts: [{ name, context: { cluster: name, user, namespace: 'default' } }],
      'current-context': name,
    },
    // No folding: the certificate data stays on one line, as every kubeconfig reader expects.
    { lineWidth: 0 },
  );
}

/**
 * Renders an admin kubeconfig with the certificates embedded, so the file stays valid when copied
 * elsewhere (e.g. .sampledb/kubeconfig) and does not depend on the temp dir's layout.
 */
export async function renderAdminKubeconfig(server: string, pki: Pki, name = 'envtest'): Promise<string> {
  const [caData, certData, keyData] = await Promise.all(
    [pki.caCert, pki.adminCert, pki.adminKey].map(async (path) => (await readFile(path)).toString('base64')),
  );
  return adminKubeconfig({ server, caData: caData!, certData: certData!, keyData: keyData! }, name);
}

export async function writeAdminKubeconfig(path: string, server: string, pki: Pki): Promise<void> {
  await writeFile(path, await renderAdminKubeconfig(server, pki), { mode: 0o600 });
}
