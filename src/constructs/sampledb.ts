import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  API_VERSION,
  type SampleDbBackupObject,
  type SampleDbBackupSpec,
  type SampleDbObject,
  type SampleDbSpec,
  sampleDbBackupValidator,
  sampleDbValidator,
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

  constructor(scope: Construct, id: string, props: SampleDbProps) {
    super(scope, id);
    const object: SampleDbObject = validatedObject('SampleDB', id, props, sampleDbValidator);
    this.name = object.metadata.name as string;
    this.apiObject = new ApiObject(this, 'resource', object);
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
