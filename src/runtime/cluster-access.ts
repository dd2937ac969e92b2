// How this process reaches the apiserver: its URL, the TLS it expects and the credentials it sends. Read from the
// pod's ServiceAccount (in a cluster) or from a kubeconfig file, without @kubernetes/client-node: its KubeConfig
// loads the whole generated API (about 100 MB of RSS) to answer these few questions (ADR 0010).

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';

export interface TlsSettings {
  /** PEM bundle the server's certificate must chain to; omitted: the system's roots. */
  readonly ca?: string;
  /** Client certificate and key (PEM), for certificate authentication. */
  readonly cert?: string;
  readonly key?: string;
  /** Accept any server certificate (kubeconfig's insecure-skip-tls-verify); never set in a cluster. */
  readonly insecureSkipTlsVerify?: boolean;
  /** The name the server's certificate must carry when it differs from the URL's host. */
  readonly serverName?: string;
}

export interface ClusterAccess {
  /** The apiserver's base URL, without a trailing slash. */
  readonly server: string;
  readonly tls: TlsSettings;
  /**
   * The headers that authenticate a request now. A token from a file is read again on each call, so a rotated
   * (bound, expiring) ServiceAccount token is followed; callers may cache the answer for a short while.
   */
  credentials(): Promise<Record<string, string>>;
}

/** Where the kubelet mounts the pod's ServiceAccount token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The apiserver as a pod sees it: the kubernetes Service's env vars, the mounted token and CA. */
export function inClusterAccess(
  env: Readonly<Record<string, string | undefined>> = process.env,
  dir: string = SERVICE_ACCOUNT_DIR,
): ClusterAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset (set KUBECONFIG to run outside one)',
    );
  }
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const tokenFile = join(dir, 'token');
  return {
    server: `https://${hostPart}:${port}`,
    tls: { ca: readFileSync(join(dir, 'ca.crt'), 'utf8') },
    credentials: async () => bearer(await readToken(tokenFile)),
  };
}

/** A kubeconfig file (YAML or JSON) as its current context names it. */
export async function kubeconfigFileAccess(path: string, contextName?: string): Promise<ClusterAccess> {
  const text = await readFile(path, 'utf8');
  // Loaded only outside a cluster: the operator's pod never pays for a YAML parser.
  const { parse } = await import('yaml');
  return accessFromKubeconfig(parse(text) as unknown, { baseDir: dirname(path), contextName });
}

/** The parts of a kubeconfig this process understands; everything else in the file is ignored. */
interface KubeconfigDocument {
  'current-context'?: string;
  clusters?: { name?: string; cluster?: Record<string, unknown> }[];
  users?: { name?: string; user?: Record<string, unknown> }[];
  contexts?: { name?: string; context?: { cluster?: string; user?: string } }[];
}

/**
 * A parsed kubeconfig → how to reach its current (or the named) context. Relative file paths are resolved against
 * `baseDir`, as kubectl does. Credential plugins (`exec`, `auth-provider`) are refused by name: this process runs
 * no external programs.
 */
export function accessFromKubeconfig(
  document: unknown,
  opts: { baseDir: string; contextName?: string | undefined; readText?: (path: string) => string },
): ClusterAccess {
  const readText = opts.readText ?? ((p: string) => readFileSync(p, 'utf8'));
  const doc = (typeof document === 'object' && document !== null ? document : {}) as KubeconfigDocument;
  const contextName = opts.contextName ?? doc['current-context'];
  if (!contextName) throw new Error('kubeconfig: no current-context');
  const context = doc.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) throw new Error(`kubeconfig: context "${contextName}" not found`);
  const cluster = doc.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster)
    throw new Error(`kubeconfig: cluster "${context.cluster ?? ''}" of context "${contextName}" not found`);
  const user = (context.user ? doc.users?.find((u) => u.name === context.user)?.user : undefined) ?? {};
  const server = stringField(cluster, 'server');
  if (!server) throw new Error(`kubeconfig: cluster "${context.cluster}" has no server`);

  const resolve = (p: string) => (isAbsolute(p) ? p : join(opts.baseDir, p));
  const pem = (fields: Record<string, unknown>, data: string, file: string): string | undefined => {
    const inline = stringField(fields, data);
    if (inline) return Buffer.from(inline, 'base64').toString('utf8');
    const path = stringField(fields, file);
    return path ? readText(resolve(path)) : undefined;
  };
  for (const plugin of ['exec', 'auth-provider'] as const) {
    if (user[plugin] !== undefined) {
      throw new Error(
        `kubeconfig: user "${context.user}" uses an ${plugin} credential plugin, which this process does not run; use a token, token file or client certificate`,
      );
    }
  }

  const tls: TlsSettings = {
    ...optional('ca', pem(cluster, 'certificate-authority-data', 'certificate-authority')),
    ...optional('cert', pem(user, 'client-certificate-data', 'client-certificate')),
    ...optional('key', pem(user, 'client-key-data', 'client-key')),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...optional('serverName', stringField(cluster, 'tls-server-name')),
  };
  const token = stringField(user, 'token');
  const tokenFile = stringField(user, 'tokenFile');
  const username = stringField(user, 'username');
  const password = stringField(user, 'password');
  let credentials: () => Promise<Record<string, string>>;
  if (token) credentials = async () => bearer(token);
  else if (tokenFile) credentials = async () => bearer(await readToken(resolve(tokenFile)));
  else if (username !== undefined && password !== undefined) {
    const basic = Buffer.from(`${username}:${password}`).toString('base64');
    credentials = async () => ({ Authorization: `Basic ${basic}` });
  } else credentials = async () => ({});
  return { server: server.replace(/\/+$/, ''), tls, credentials };
}

/**
 * The shape of @kubernetes/client-node's KubeConfig this process reads, so tests and tools that hold one (the
 * envtest control plane hands them out) can pass it without this module importing client-node.
 */
export interface KubeConfigLike {
  getCurrentCluster(): {
    server: string;
    caData?: string | undefined;
    caFile?: string | undefined;
    skipTLSVerify?: boolean | undefined;
    tlsServerName?: string | undefined;
  } | null;
  getCurrentUser(): {
    name?: string;
    certData?: string | undefined;
    certFile?: string | undefined;
    keyData?: string | undefined;
    keyFile?: string | undefined;
    token?: string | undefined;
    username?: string | undefined;
    password?: string | undefined;
    exec?: unknown;
    authProvider?: { name?: string; config?: Record<string, string | undefined> } | undefined;
  } | null;
}

export function isKubeConfigLike(value: unknown): value is KubeConfigLike {
  return typeof (value as KubeConfigLike | undefined)?.getCurrentCluster === 'function';
}

/** client-node's loaded KubeConfig → the same access (its fields are kubeconfig's, already resolved and base64). */
export function accessFromKubeConfigLike(kc: KubeConfigLike): ClusterAccess {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const user = kc.getCurrentUser() ?? {};
  // loadFromCluster() records the mounted token as a "tokenFile" auth provider.
  const tokenFile = user.authProvider?.name === 'tokenFile' ? user.authProvider.config?.tokenFile : undefined;
  if (user.exec !== undefined || (user.authProvider !== undefined && !tokenFile)) {
    throw new Error(
      `kubeconfig: user "${user.name ?? ''}" uses a credential plugin, which this process does not run`,
    );
  }
  return accessFromKubeconfig(
    {
      'current-context': 'current',
      contexts: [{ name: 'current', context: { cluster: 'c', user: 'u' } }],
      clusters: [
        {
          name: 'c',
          cluster: {
            server: cluster.server,
            'certificate-authority-data': cluster.caData,
            'certificate-authority': cluster.caFile,
            'insecure-skip-tls-verify': cluster.skipTLSVerify,
            'tls-server-name': cluster.tlsServerName,
          },
        },
      ],
      users: [
        {
          name: 'u',
          user: {
            'client-certificate-data': user.certData,
            'client-certificate': user.certFile,
            'client-key-data': user.keyData,
            'client-key': user.keyFile,
            token: user.token,
            tokenFile,
            username: user.username,
            password: user.password,
          },
        },
      ],
    },
    { baseDir: process.cwd() },
  );
}

function bearer(token: string): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function readToken(path: string): Promise<string> {
  return (await readFile(path, 'utf8')).trim();
}

function stringField(fields: Record<string, unknown>, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
