// The stack program behind Pulumi.yaml: reads the per-environment config, builds (or takes) the controller image,
// and deploys namespaces, CRDs, the operator and the configured SampleDB instances.
import * as pulumi from '@pulumi/pulumi';
import packageJson from '../../package.json' with { type: 'json' };
import { SampleDb, SampleDbOperator } from './components.ts';
import { namespacesToCreate, parseStackConfig, type RawStackConfig, type StackConfig } from './config.ts';
import { controllerImage } from './image.ts';
import { deployObjects } from './kube-resources.ts';
import { namespaceObjects } from './manifests.ts';

export interface InstanceOutput {
  readonly namespace: string;
  readonly name: string;
  readonly host: pulumi.Output<string>;
  readonly port: pulumi.Output<number>;
  readonly bindingSecretName: pulumi.Output<string>;
}

/** What `pulumi stack output` shows. Nothing secret: credentials stay in the cluster's Secrets. */
export interface StackOutputs {
  readonly namespace: pulumi.Output<string>;
  readonly image: pulumi.Output<string>;
  readonly imageDigest: pulumi.Output<string>;
  readonly imageBuilt: boolean;
  readonly deploymentName: pulumi.Output<string>;
  readonly crds: pulumi.Output<string[]>;
  readonly watchNamespaces: readonly string[];
  /** Keyed `namespace/name`. */
  readonly instances: Record<string, InstanceOutput>;
}

/** Reads every key of the project's config namespace (`sampledb-operator:<key>`). */
export function readRawConfig(config: pulumi.Config): RawStackConfig {
  return {
    namespace: config.get('namespace'),
    image: config.getObject('image'),
    replicas: config.get('replicas'),
    logLevel: config.get('logLevel'),
    postgresImageRepository: config.get('postgresImageRepository'),
    watchNamespaces: config.getObject('watchNamespaces'),
    resources: config.getObject('resources'),
    instances: config.getObject('instances'),
    createNamespaces: config.get('createNamespaces'),
    retainCrdsOnDelete: config.get('retainCrdsOnDelete'),
    imagePullSecrets: config.getObject('imagePullSecrets'),
  };
}

export function deployStack(
  config: StackConfig,
  credentials: { username?: string; password?: pulumi.Output<string> },
) {
  const image = controllerImage('controller-image', config.image, credentials);
  const namespaces = deployObjects('namespaces', namespaceObjects(namespacesToCreate(config)), {});
  const operator = new SampleDbOperator(
    'sampledb-operator',
    {
      image: image.ref,
      namespace: config.namespace,
      replicas: config.replicas,
      logLevel: config.logLevel,
      postgresImageRepository: config.postgresImageRepository,
      watchNamespaces: config.watchNamespaces,
      imagePullSecrets: config.imagePullSecrets,
      retainCrdsOnDelete: config.retainCrdsOnDelete,
      ...(config.resources ? { resources: config.resources } : {}),
    },
    // Namespaced RBAC lands in the watched namespaces, so they exist first.
    { dependsOn: namespaces },
  );
  const instances: Record<string, InstanceOutput> = {};
  for (const instance of config.instances) {
    const db = new SampleDb(
      `${instance.namespace}/${instance.name}`,
      {
        name: instance.name,
        namespace: instance.namespace,
        spec: instance.spec,
        ...(instance.labels ? { labels: instance.labels } : {}),
      },
      // After the CRDs and the controller; on destroy, deleted while the controller still runs its deletion policy.
      { dependsOn: [operator, ...namespaces] },
    );
    instances[`${instance.namespace}/${instance.name}`] = {
      namespace: instance.namespace,
      name: instance.name,
      host: db.host,
      port: db.port,
      bindingSecretName: db.bindingSecretName,
    };
  }
  return {
    namespace: operator.namespace,
    image: operator.image,
    imageDigest: image.digest,
    imageBuilt: config.image.build,
    deploymentName: operator.deploymentName,
    crds: operator.crdNames,
    watchNamespaces: config.watchNamespaces,
    instances,
  } satisfies StackOutputs;
}

/** The program: config from the selected stack (`Pulumi.<stack>.yaml`), outputs for `pulumi stack output`. */
export function stackProgram(): StackOutputs {
  const config = new pulumi.Config();
  const stackConfig = parseStackConfig(readRawConfig(config), packageJson.version);
  const username = config.get('registryUsername');
  const password = config.getSecret('registryPassword');
  return deployStack(stackConfig, { ...(username ? { username } : {}), ...(password ? { password } : {}) });
}
