// `kubectl sampledb`: runs one parsed command against the cluster the kubeconfig names, as kubectl would
// (--kubeconfig, else $KUBECONFIG, else ~/.kube/config; --context; -n, else the context's namespace, else default).
import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { ANNOTATIONS, API_VERSION, GROUP, KINDS, PLURALS, VERSION } from '../api/identity.ts';
import type { SampleDbObject } from '../api/sampledb.ts';
import { type Command, type ConnectionFlags, parseArgs } from './args.ts';
import { PsqlError, runPsql } from './psql.ts';
import { statusView } from './status-view.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Loads the kubeconfig the way kubectl does and returns it with the namespace to use. */
export function loadKubeConfig(
  flags: ConnectionFlags,
  env: Readonly<Record<string, string | undefined>>,
): { kubeConfig: KubeConfig; namespace: string } {
  const kubeConfig = new KubeConfig();
  const source = flags.kubeconfig ?? env.KUBECONFIG ?? '~/.kube/config';
  try {
    if (flags.kubeconfig) kubeConfig.loadFromFile(flags.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new CliError(
      `cannot load the kubeconfig ${source}: ${error instanceof Error ? error.message : error}`,
    );
  }
  if (flags.context) {
    if (!kubeConfig.getContextObject(flags.context))
      throw new CliError(`context "${flags.context}" is not in the kubeconfig`);
    kubeConfig.setCurrentContext(flags.context);
  }
  if (!kubeConfig.getCurrentCluster())
    throw new CliError('the kubeconfig has no current cluster (use --kubeconfig or --context)');
  const contextNamespace = kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace;
  return { kubeConfig, namespace: flags.namespace ?? contextNamespace ?? 'default' };
}

export class CliError extends Error {}

/** Runs `kubectl sampledb <argv>`; returns the exit code (0 done, 1 failed, 2 bad usage). */
/** `env` is the process environment, read only by the bin (src/cli/kubectl-sampledb.ts). */
export async function run(
  argv: readonly string[],
  io: Io,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const parsed = parseArgs(argv);
  if (parsed.kind === 'help') {
    io.out(`${parsed.text}\n`);
    return 0;
  }
  if (parsed.kind === 'error') {
    io.err(`error: ${parsed.message}\n\n${parsed.help}\n`);
    return 2;
  }
  try {
    const { kubeConfig, namespace } = loadKubeConfig(parsed.connection, env);
    const api = kubeConfig.makeApiClient(CustomObjectsApi);
    if (parsed.run.command === 'psql')
      return await runPsql(kubeConfig, namespace, await getSampleDb(api, namespace, parsed.run.name), env);
    io.out(await execute(api, namespace, parsed.run));
    return 0;
  } catch (error) {
    io.err(`error: ${describeError(error, parsed.run)}\n`);
    return 1;
  }
}

async function getSampleDb(api: CustomObjectsApi, namespace: string, name: string): Promise<SampleDbObject> {
  try {
    return (await api.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURALS.sampleDb,
      name,
    })) as SampleDbObject;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404)
      throw new CliError(`SampleDB "${name}" not found in namespace "${namespace}"`);
    throw error;
  }
}

async function execute(api: CustomObjectsApi, namespace: string, command: Command): Promise<string> {
  const db = await getSampleDb(api, namespace, command.name);
  switch (command.command) {
    case 'status':
      return statusView(db);
    case 'backup': {
      const created = (await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURALS.sampleDbBackup,
        body: {
          apiVersion: API_VERSION,
          kind: KINDS.sampleDbBackup,
          metadata: command.backupName ? { name: command.backupName } : { generateName: `${command.name}-` },
          spec: { sampleDB: { name: command.name } },
        },
      })) as { metadata?: { name?: string } };
      return `sampledbbackup.${GROUP}/${created.metadata?.name} created\n`;
    }
    case 'restore': {
      const created = (await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURALS.sampleDbRestore,
        body: {
          apiVersion: API_VERSION,
          kind: KINDS.sampleDbRestore,
          metadata: { generateName: `${command.name}-restore-` },
          spec: { sampleDB: { name: command.name }, backup: { name: command.backup } },
        },
      })) as { metadata?: { name?: string } };
      return `sampledbrestore.${GROUP}/${created.metadata?.name} created\n`;
    }
    case 'drill': {
      const created = (await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURALS.sampleDbDrill,
        body: {
          apiVersion: API_VERSION,
          kind: KINDS.sampleDbDrill,
          metadata: command.drillName
            ? { name: command.drillName }
            : { generateName: `${command.name}-${command.kind}-` },
          spec: {
            sampleDB: { name: command.name },
            kind: command.kind,
            ...(command.schedule ? { schedule: command.schedule } : {}),
          },
        },
      })) as { metadata?: { name?: string } };
      const drill = created.metadata?.name;
      return `sampledbdrill.${GROUP}/${drill} created; follow it with: kubectl get sampledbdrill ${drill} -o wide -w\n`;
    }
    case 'switchover': {
      const instances = db.status?.replication?.instances;
      if (instances && !instances.some((i) => i.name === command.to))
        throw new CliError(
          `"${command.to}" is not an instance of SampleDB "${command.name}" (instances: ${instances.map((i) => i.name).join(', ')})`,
        );
      if (db.status?.replication?.primary === command.to)
        throw new CliError(`"${command.to}" is already the primary of SampleDB "${command.name}"`);
      await api.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: PLURALS.sampleDb,
          name: command.name,
          body: { metadata: { annotations: { [ANNOTATIONS.switchoverTo]: command.to } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return `sampledb.${GROUP}/${command.name} annotated ${ANNOTATIONS.switchoverTo}=${command.to}; follow it with: kubectl sampledb status ${command.name}\n`;
    }
    case 'psql':
      throw new CliError('psql runs on the terminal, not here');
  }
}

/** A short, clear message: the apiserver's own message for API errors (never a response body dump). */
export function describeError(error: unknown, command: Command): string {
  if (error instanceof CliError || error instanceof PsqlError) return error.message;
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? safeJson(error.body) : error.body;
    const message = (body as { message?: string } | undefined)?.message;
    if (error.code === 403)
      return `forbidden: ${message ?? `not allowed to ${command.command} ${command.name}`}`;
    if (error.code === 404) return `not found: ${message ?? 'the object does not exist'}`;
    if (error.code === 409) return `conflict: ${message ?? 'the object already exists or changed'}`;
    if (error.code === 422) return `refused by the API: ${message ?? 'invalid object'}`;
    return `the apiserver answered ${error.code}: ${message ?? 'no message'}`;
  }
  const code = (error as { code?: string } | undefined)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND')
    return `cannot reach the cluster (${code}); check --kubeconfig, --context and the server address`;
  return error instanceof Error ? error.message : String(error);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
