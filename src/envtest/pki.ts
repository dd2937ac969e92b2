import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Pki {
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPublicKey: string;
}

// P-256 keys instead of RSA: key generation is near-instant, which keeps start-up inside its budget.
const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const days = ['-days', '3650'];

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr || String(error)}`);
  }
}

/**
 * Generates the control plane's certificates with the openssl CLI: a CA, the apiserver serving certificate
 * (valid for every name in-cluster clients and kubectl use), an admin client certificate in system:masters
 * and the service-account token signing key.
 */
export async function generatePki(
  dir: string,
  serviceClusterIp: string,
  /** More addresses the apiserver is reached at (the real node's bridge gateway). */
  extraIps: readonly string[] = [],
): Promise<Pki> {
  const pki: Pki = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPublicKey: join(dir, 'sa.pub'),
  };
  const serviceAccountKey = openssl([
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    pki.serviceAccountKey,
  ]).then(() =>
    openssl(['pkey', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPublicKey]),
  );
  await openssl([
    'req',
    '-x509',
    ...ecKey,
    ...days,
    '-keyout',
    pki.caKey,
    '-out',
    pki.caCert,
    '-subj',
    '/CN=envtest-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]);
  const signedByCa = ['-x509', '-CA', pki.caCert, '-CAkey', pki.caKey, ...ecKey, ...days];
  const sans = [
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
    'IP:127.0.0.1',
    `IP:${serviceClusterIp}`,
    ...extraIps.map((ip) => `IP:${ip}`),
  ];
  await Promise.all([
    openssl([
      'req',
      ...signedByCa,
      '-keyout',
      pki.servingKey,
      '-out',
      pki.servingCert,
      '-subj',
      '/CN=kube-apiserver',
      '-addext',
      `subjectAltName=${sans.join(',')}`,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      '-addext',
      'extendedKeyUsage=serverAuth',
    ]),
    openssl([
      'req',
      ...signedByCa,
      '-keyout',
      pki.adminKey,
      '-out',
      pki.adminCert,
      '-subj',
      '/O=system:masters/CN=envtest-admin',
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      '-addext',
      'extendedKeyUsage=clientAuth',
    ]),
    serviceAccountKey,
  ]);
  return pki;
}
