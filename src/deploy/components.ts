// Pulumi components for other Pulumi programs (`import { SampleDbOperator } from 'sampledb-operator/pulumi'`):
// the same cdk8s constructs as dist/, deployed as Pulumi resources with CRDs created before anything that uses them.
import * as pulumi from '@pulumi/pulumi';
import {
  API_VERSION,
  clientNamesFor,
  resolveSampleDbSpec,
  type SampleDbSpec,
  serviceHost,
} from '../api/index.ts';
import type { SampleDbOperatorProps } from '../constructs/index.ts';
import { isDigestRef } from './config.ts';
import { dependsOnOf, deployObjects } from './kube-resources.ts';
import { crdObjects, IMAGE_PLACEHOLDER, operatorObjects, sampleDbObjects, substitute } from './manifests.ts';

export interface SampleDbOperatorArgs extends Omit<SampleDbOperatorProps, 'image'> {
  /**
   * Controller image pinned by digest (`repo@sha256:...`), e.g. the `ref` of a `@pulumi/docker-build` Image.
   * Pinning is what makes a new build, and only a new build, roll the Deployment.
   */
  readonly image: pulumi.Input<string>;
  /** Accept an image without a digest (a tag): for local clusters only. Default: `false`. */
  readonly allowUnpinnedImage?: boolean;
  /** Deploy the CRDs. Default: `true`; `false` when another stack owns them. */
  readonly installCrds?: boolean;
  /** Keep the CRDs, and so every SampleDB, when this component is deleted. Default: `false`. */
  readonly retainCrdsOnDelete?: boolean;
}

/**
 * The SampleDB operator: CRDs, namespace, ServiceAccount, least-privilege RBAC, the controller Deployment,
 * PodDisruptionBudget, metrics Service and the deletion-protection admission policy.
 *
 * Resources that create SampleDBs should `dependsOn` this component: it completes only once the CRDs are
 * established and the controller Deployment is available.
 */
export class SampleDbOperator extends pulumi.ComponentResource {
  /** Namespace the controller runs in. */
  readonly namespace: pulumi.Output<string>;
  /** Name of the controller Deployment. */
  readonly deploymentName: pulumi.Output<string>;
  /** The image the Deployment runs. */
  readonly image: pulumi.Output<string>;
  /** Its digest (`sha256:...`), empty for an unpinned image. */
  readonly imageDigest: pulumi.Output<string>;
  readonly serviceAccountName: pulumi.Output<string>;
  /** Service in front of `/metrics`. */
  readonly metricsServiceName: pulumi.Output<string>;
  /** Names of the CRDs, empty when `installCrds` is false. */
  readonly crdNames: pulumi.Output<string[]>;
  /** The CRD resources: depend on these (or on the component) before creating custom resources. */
  readonly crds: pulumi.Resource[];

  constructor(name: string, args: SampleDbOperatorArgs, opts?: pulumi.ComponentResourceOptions) {
    super('sampledb:index:SampleDbOperator', name, {}, opts);
    const { image, allowUnpinnedImage, installCrds, retainCrdsOnDelete, ...props } = args;

    const inherited = dependsOnOf(opts);
    const crds = installCrds === false ? [] : crdObjects();
    this.crds = deployObjects(`${name}/crds`, crds, {
      parent: this,
      dependsOn: inherited,
      ...(retainCrdsOnDelete ? { retainOnDelete: true } : {}),
    });

    const checkPinned = (ref: string): string => {
      if (!allowUnpinnedImage && !isDigestRef(ref)) {
        throw new Error(
          `SampleDbOperator "${name}": image must be pinned by digest (repo@sha256:...), got "${ref}"`,
        );
      }
      return ref;
    };
    // A plain string fails here, at once; an Output (a build's digest) fails the update when it resolves.
    if (typeof image === 'string') checkPinned(image);
    const checkedImage = pulumi.output(image).apply(checkPinned);
    // Synthesized with a placeholder image (the digest may be unknown until the build runs), then substituted.
    const objects = operatorObjects(props).map((o) => substitute(o, IMAGE_PLACEHOLDER, checkedImage));
    deployObjects(`${name}/operator`, objects, { parent: this, dependsOn: [...inherited, ...this.crds] });

    const deployment = objects.find((o) => o.kind === 'Deployment');
    const service = objects.find((o) => o.kind === 'Service');
    const serviceAccount = objects.find((o) => o.kind === 'ServiceAccount');
    this.namespace = pulumi.output(deployment?.metadata.namespace ?? '');
    this.deploymentName = pulumi.output(deployment?.metadata.name ?? '');
    this.serviceAccountName = pulumi.output(serviceAccount?.metadata.name ?? '');
    this.metricsServiceName = pulumi.output(service?.metadata.name ?? '');
    this.image = checkedImage;
    this.imageDigest = checkedImage.apply((ref) => /@(sha256:[0-9a-f]{64})$/.exec(ref)?.[1] ?? '');
    this.crdNames = pulumi.output(crds.map((crd) => crd.metadata.name));
    this.registerOutputs({
      namespace: this.namespace,
      deploymentName: this.deploymentName,
      image: this.image,
      imageDigest: this.imageDigest,
      serviceAccountName: this.serviceAccountName,
      metricsServiceName: this.metricsServiceName,
      crdNames: this.crdNames,
    });
  }
}

export interface SampleDbArgs {
  /** Object name. Default: the resource name. */
  readonly name?: string;
  readonly namespace: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** Checked against the CRD schema and rules before anything is sent (see `kubectl explain sampledb.spec`). */
  readonly spec: SampleDbSpec;
}

/**
 * One SampleDB. Give it `dependsOn: [operator]` so the CRD exists (and, on destroy, the operator outlives it to
 * run its deletion policy).
 */
export class SampleDb extends pulumi.ComponentResource {
  readonly name: pulumi.Output<string>;
  readonly namespace: pulumi.Output<string>;
  /** The client Service's DNS name without the cluster domain: the host of the SampleDB's status.endpoint. */
  readonly host: pulumi.Output<string>;
  readonly port: pulumi.Output<number>;
  /** Secret with the connection details (user, password, uri), written by the operator. Its name, not its data. */
  readonly bindingSecretName: pulumi.Output<string>;
  /** ConfigMap with the non-secret connection details, written by the operator. */
  readonly connectionConfigMapName: pulumi.Output<string>;

  constructor(name: string, args: SampleDbArgs, opts?: pulumi.ComponentResourceOptions) {
    super('sampledb:index:SampleDb', name, {}, opts);
    const objectName = args.name ?? name;
    const objects = sampleDbObjects({ ...args, name: objectName });
    deployObjects(name, objects, { parent: this, dependsOn: dependsOnOf(opts) });
    // From src/api, as the controller's status.endpoint and the cdk8s SampleDb: this entry point ships without
    // src/sampledb (package.json "files").
    const names = clientNamesFor(objectName);
    this.name = pulumi.output(objectName);
    this.namespace = pulumi.output(args.namespace);
    this.host = pulumi.output(serviceHost(names.service, args.namespace));
    this.port = pulumi.output(resolveSampleDbSpec(args.spec).service.port);
    this.bindingSecretName = pulumi.output(names.bindingSecret);
    this.connectionConfigMapName = pulumi.output(names.connectionConfigMap);
    this.registerOutputs({
      apiVersion: API_VERSION,
      name: this.name,
      namespace: this.namespace,
      host: this.host,
      port: this.port,
      bindingSecretName: this.bindingSecretName,
      connectionConfigMapName: this.connectionConfigMapName,
    });
  }
}
