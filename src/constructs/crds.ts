import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { allCrds } from '../api/index.ts';

/** Props for {@link SampleDbCrds}. Nothing to configure today; kept for forward compatibility. */
export type SampleDbCrdsProps = Record<string, never>;

/**
 * The SampleDB and SampleDBBackup CustomResourceDefinitions, generated from the API schemas in `src/api`.
 *
 * Put them in a chart that is applied before any chart with SampleDB instances.
 */
export class SampleDbCrds extends Construct {
  /** The CRD objects, in the order they are emitted. */
  readonly crds: ApiObject[];

  constructor(scope: Construct, id: string, _props: SampleDbCrdsProps = {}) {
    super(scope, id);
    this.crds = allCrds().map((crd) => new ApiObject(this, crd.spec.names.plural, crd));
  }
}
