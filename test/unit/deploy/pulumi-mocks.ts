// Runs Pulumi code against `pulumi.runtime.setMocks`, recording every resource with its inputs and the names of
// what it depends on (read through a resource transform, since mocks never see resource options).
import * as pulumi from '@pulumi/pulumi';

export const PROJECT = 'sampledb-operator';
export const FAKE_DIGEST = `sha256:${'ab'.repeat(32)}`;

export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
  /** Logical names of the explicit dependsOn resources. */
  readonly dependsOn: readonly string[];
  readonly retainOnDelete: boolean;
}

export interface MockRun<T> {
  readonly result: T;
  readonly resources: readonly RecordedResource[];
}

/** The value inside an Output (or a plain value), for assertions. */
export function outputValue<T>(output: pulumi.Input<T>): Promise<T> {
  return new Promise((resolve) => pulumi.output(output).apply((v) => resolve(v as T)));
}

/** Resolves every Output inside a value, recursively. */
export async function resolveDeep(value: unknown): Promise<unknown> {
  if (pulumi.Output.isInstance(value)) return resolveDeep(await outputValue(value));
  if (Array.isArray(value)) return Promise.all(value.map(resolveDeep));
  if (typeof value === 'object' && value !== null && !pulumi.Resource.isInstance(value)) {
    const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await resolveDeep(v)]));
    return Object.fromEntries(entries);
  }
  return value;
}

/** Every Output inside a value that is marked secret, by path. */
export async function secretPaths(value: unknown, path = '$'): Promise<string[]> {
  if (pulumi.Output.isInstance(value)) {
    if (await pulumi.isSecret(value)) return [path];
    return secretPaths(await outputValue(value), path);
  }
  if (Array.isArray(value))
    return (await Promise.all(value.map((v, i) => secretPaths(v, `${path}[${i}]`)))).flat();
  if (typeof value === 'object' && value !== null && !pulumi.Resource.isInstance(value)) {
    return (await Promise.all(Object.entries(value).map(([k, v]) => secretPaths(v, `${path}.${k}`)))).flat();
  }
  return [];
}

/** Pulumi config values are strings; objects are stored as JSON. */
export function configOf(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [
      k.includes(':') ? k : `${PROJECT}:${k}`,
      typeof v === 'string' ? v : JSON.stringify(v),
    ]),
  );
}

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getDependenciesList(): string[];
  getRetainondelete(): boolean | undefined;
}
interface Monitor {
  registerResource(req: RegisterRequest, callback: unknown): unknown;
}

/**
 * Sets the config, runs `program` under mocks and waits until every resource is registered. Resource outputs
 * echo their inputs; a docker-build Image gets {@link FAKE_DIGEST}. Mocks never see resource options, so the
 * monitor's registerResource is wrapped to read the dependencies (URNs, explicit and through inputs) and
 * retainOnDelete from the request the engine would get.
 */
export async function runWithMocks<T>(
  config: Record<string, string>,
  program: () => T,
  options: { stack?: string; secretKeys?: string[] } = {},
): Promise<MockRun<T>> {
  pulumi.runtime.setAllConfig(config, options.secretKeys ?? []);
  const inputs = new Map<string, Record<string, unknown>>();
  const resources: RecordedResource[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const state: Record<string, unknown> = { ...args.inputs };
        if (args.type === 'docker-build:index:Image') {
          state.digest = FAKE_DIGEST;
          state.ref = `${(args.inputs.tags as string[])[0]}@${FAKE_DIGEST}`;
        }
        inputs.set(`${args.type}::${args.name}`, args.inputs);
        return { id: `${args.name}-id`, state };
      },
      call(args) {
        return args.inputs;
      },
    },
    PROJECT,
    options.stack ?? 'test',
    false,
  );
  const monitor = pulumi.runtime.getMonitor() as unknown as Monitor;
  const registerResource = monitor.registerResource.bind(monitor);
  const requests: RegisterRequest[] = [];
  monitor.registerResource = (req, callback) => {
    requests.push(req);
    return registerResource(req, callback);
  };
  const result = program();
  await resolveDeep(result);
  // Registration is asynchronous: wait for the RPC queue to drain.
  await pulumi.runtime.disconnect();
  for (const req of requests) {
    resources.push({
      type: req.getType(),
      name: req.getName(),
      inputs: inputs.get(`${req.getType()}::${req.getName()}`) ?? {},
      dependsOn: req.getDependenciesList().map((urn) => urn.split('::').at(-1) ?? urn),
      retainOnDelete: req.getRetainondelete() === true,
    });
  }
  return { result, resources };
}
