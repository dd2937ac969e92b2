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

/**
 * A SampleDB database. The props are checked against the same schema and rules as the CRD, so a mistake fails
 * `cdk8s synth` with a message naming the field instead of failing later at `kubectl apply`.
 */
export class SampleDb extends Construct {
  readonly name: string;
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: SampleDbProps) {
    super(scope, id);
    const object: SampleDbObject = {
      apiVersion: API_VERSION,
      kind: 'SampleDB',
      metadata: metadataOf(id, props),
      spec: structuredClone(props.spec),
    };
    const errors = sampleDbValidator.validate(object);
    if (errors.length > 0) throw new ValidationError(`SampleDB "${object.metadata.name}"`, errors);
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
    const object: SampleDbBackupObject = {
      apiVersion: API_VERSION,
      kind: 'SampleDBBackup',
      metadata: metadataOf(id, props),
      spec: structuredClone(props.spec),
    };
    const errors = sampleDbBackupValidator.validate(object);
    if (errors.length > 0) throw new ValidationError(`SampleDBBackup "${object.metadata.name}"`, errors);
    this.name = object.metadata.name as string;
    this.apiObject = new ApiObject(this, 'resource', object);
  }
}
