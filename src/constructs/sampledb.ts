import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  API_VERSION,
  clientNamesFor,
  resolveSampleDbSpec,
  type SampleDbBackupObject,
  type SampleDbBackupSpec,
  type SampleDbObject,
  type SampleDbSpec,
  sampleDbBackupValidator,
  sampleDbValidator,
  serviceHost,
  ValidationError,
  type Validator,
} from '../api/index.ts';

interface InstanceMetadata {
  /** Object name. Default: the construct id. */
  readonly name?: string;
  /** Namespace. Default: none (the namespace of whoever applies the manifest). */
  readonly namespace?: string;
  /** Extra labels. Default: none. */
  readonly labels?: Record<string, string>;
  /** Extra annotations. Default: none. */
  readonly annotations?: Record<string, string>;
}

/**
 * Props for {@link SampleDb}: object metadata plus the SampleDB spec. Every spec field documents its default in
 * the API (see `kubectl explain sampledb.spec`); the essentials are `version` and `storage.size`.
 */
export interface SampleDbProps extends InstanceMetadata {
  readonly spec: SampleDbSpec;
}

function metadataOf(id: string, props: InstanceMetadata) {
  return {
    name: props.name ?? id,
    ...(props.namespace ? { namespace: props.namespace } : {}),
    ...(props.labels ? { labels: { ...props.labels } } : {}),
    ...(props.annotations ? { annotations: { ...props.annotations } } : {}),
  };
}

type InstanceObject<K, S> = {
  apiVersion: typeof API_VERSION;
  kind: K;
  metadata: ReturnType<typeof metadataOf>;
  spec: S;
};

/** Builds the object, checks it against its API validator and throws one error naming every bad field. */
function validatedObject<K extends 'SampleDB' | 'SampleDBBackup', S>(
  kind: K,
  id: string,
  props: InstanceMetadata & { readonly spec: S },
  validator: Validator,
): InstanceObject<K, S> {
  const object: InstanceObject<K, S> = {
    apiVersion: API_VERSION,
    kind,
    metadata: metadataOf(id, props),
    spec: structuredClone(props.spec),
  };
  const errors = validator.validate(object);
  if (errors.length > 0) throw new ValidationError(`${kind} "${object.metadata.name}"`, errors);
  return object;
}

/**
 * A SampleDB database. The props are checked against the same schema and rules as the CRD, so a mistake fails
 * `cdk8s synth` with a message naming the field instead of failing later at `kubectl apply`.
 */
export class SampleDb extends Construct {
  readonly name: string;
  readonly apiObject: ApiObject;
  /**
   * The client Service's DNS name, `<name>.<namespace>.svc` (the host of the SampleDB's `status.endpoint`); only
   * when `namespace` is given, since otherwise it is whatever namespace the manifest is applied to.
   */
  readonly host: string | undefined;
  /** The client Service's port (`spec.service.port`, default 5432). */
  readonly port: number;
  /** Secret with the connection details (user, password, uri), written by the operator. Its name, not its data. */
  readonly bindingSecretName: string;
  /** ConfigMap with the non-secret connection details, written by the operator. */
  readonly connectionConfigMapName: string;

  constructor(scope: Construct, id: string, props: SampleDbProps) {
    super(scope, id);
    const object: SampleDbObject = validatedObject('SampleDB', id, props, sampleDbValidator);
    this.name = object.metadata.name as string;
    this.apiObject = new ApiObject(this, 'resource', object);
    const names = clientNamesFor(this.name);
    this.host = props.namespace ? serviceHost(names.service, props.namespace) : undefined;
    this.port = resolveSampleDbSpec(object.spec).service.port;
    this.bindingSecretName = names.bindingSecret;
    this.connectionConfigMapName = names.connectionConfigMap;
  }
}

export interface SampleDbBackupProps extends InstanceMetadata {
  readonly spec: SampleDbBackupSpec;
}

/** An on-demand backup of a SampleDB (usually created by `kubectl`, or by the operator's schedule). */
export class SampleDbBackup extends Construct {
  readonly name: string;
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SampleDbBackupProps) {
    super(scope, id);
    const object: SampleDbBackupObject = validatedObject(
      'SampleDBBackup',
      id,
      props,
      sampleDbBackupValidator,
    );
    this.name = object.metadata.name as string;
    this.apiObject = new ApiObject(this, 'resource', object);
  }
}
