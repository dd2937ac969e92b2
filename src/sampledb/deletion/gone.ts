// After a SampleDB is gone (its finalizer removed by hand, or an operator older than the data-protection finalizer
// deleted it), nothing applies a policy to its claims: keep the data of a claim being deleted on a Retain volume, then
// release every claim, so our finalizer never keeps one Terminating forever. One action per reconcile; the claims'
// watch events bring the next.
import type { Logger } from '../../runtime/index.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import { planClaims } from './claims.ts';
import { observeDataVolumes } from './observe.ts';
import { releaseVolumes, retainVolumes, VOLUME_WRITES } from './volumes.ts';

export async function settleClaimsOfGone(
  ref: { namespace: string; name: string },
  view: ClusterView,
  writer: Writer,
  log: Logger,
): Promise<void> {
  const write = writer.only(VOLUME_WRITES);
  const action = planClaims(undefined, observeDataVolumes(view, ref.namespace, ref.name));
  if (action.kind === 'retain')
    await retainVolumes(
      { namespace: ref.namespace, sampleDbName: ref.name, write, log },
      action.volumes,
      action.decision,
    );
  else if (action.kind === 'release') {
    await releaseVolumes(view, write, ref.namespace, action.names);
    log.info({ pvcs: action.names }, 'released the data claims of a SampleDB that is gone');
  }
}
