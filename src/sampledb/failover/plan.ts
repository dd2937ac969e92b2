// Who is the primary, and what to do next to make the cluster agree: decided from the election record and what the
// instances show, nothing else (docs/adr/0008-primary-election.md). The operator can be killed between any two
// actions: the next run re-derives the same next step from what the cluster shows. Every action carries the term it
// was planned in; the executor refuses it when the record has moved on (the term is the fencing token).
//
// Invariants, each held by a test of plan.test.ts:
// - a promotion only ever targets the record's primary, and only once no other instance answers as a primary and
//   every pod labelled primary but not elected has lost its label (fence before promote);
//   in a switchover, only once the old primary is back as a standby and the target has received its final WAL (up to
//   the end of its shutdown checkpoint, which the old primary's restarted server reports as its replay LSN), so the
//   old primary can follow the new one; a target that does not get there within switchoverTimeoutMs is not promoted:
//   the switchover is aborted and the old primary, which holds every acknowledged commit, is elected back;
// - while the recorded primary's pod is being deleted or gone, nobody is published as the primary;
// - a new term is elected only when the recorded primary has been unavailable longer than the delay, or its pod is
//   gone or replaced (failover),
//   on a switchover request to a ready, streaming replica, or when a scale down would remove the primary;
// - the candidate of a failover is the replica with the most advanced WAL, ties to the lowest ordinal;
// - a standby is re-cloned (rejoin) only while the primary is available and labelled: when it is ahead of the
//   primary, or has answered without streaming for rejoinAfterMs.

export type PodState = 'absent' | 'terminating' | 'running';

/** What one instance answered over SQL (ADR 0008), when it answered. */
export interface SqlAnswer {
  /** `pg_is_in_recovery()`: a standby. */
  inRecovery: boolean;
  /** A primary's `pg_current_wal_lsn()`, a standby's `pg_last_wal_receive_lsn()` (0 when it has received none). */
  lsn: bigint;
  /** A standby's WAL receiver is streaming from a primary. */
  streaming: boolean;
  /**
   * A standby's `pg_last_wal_replay_lsn()`. An old primary restarted as a standby after a clean shutdown reports the
   * end of its shutdown checkpoint here, its last WAL byte, before it has streamed anything.
   */
  replayLsn?: bigint;
}

export interface MemberObservation {
  /** The pod name, `<name>-<ordinal>`. */
  name: string;
  ordinal: number;
  pod: PodState;
  /** The pod's Ready condition. */
  ready: boolean;
  /** The `sampledb.io/role` label. */
  roleLabel?: 'primary' | 'replica';
  /** The `sampledb.io/term` annotation: the term in which it was labelled. */
  termLabel?: number;
  /** Undefined: it did not answer (not running, not listening, or unreachable). */
  sql?: SqlAnswer;
  /** A standby: when it was first seen answering without streaming (the previous status), if it still does not. */
  notStreamingSince?: Date;
}

export type HandoverReason = 'Failover' | 'Switchover' | 'ScaleDown';

export interface Handover {
  from: string;
  reason: HandoverReason;
  /** Switchover: the old primary's LSN when the term was elected; the target must have received it. */
  lsn?: bigint;
}

/** `status.replication`: the election record. */
export interface ElectionRecord {
  primary?: string;
  term: number;
  primaryUnavailableSince?: Date;
  handover?: Handover;
}

export interface ReplicationObservation {
  /** `spec.instances`. */
  instances: number;
  failoverDelayMs: number;
  record: ElectionRecord;
  /** The record as published in the election ConfigMap the pods read at start. */
  published?: { primary: string; term: number };
  /** Every ordinal from 0 to the larger of `instances` and the StatefulSet's replicas, absent pods included. */
  members: readonly MemberObservation[];
  /** The `sampledb.io/switchover-to` annotation. */
  switchoverTo?: string;
  /** How long a standby may answer without streaming, while the primary is available, before it is re-cloned. */
  rejoinAfterMs: number;
  /**
   * How long a switchover may keep the writes stopped (from its first wait, recorded as `primaryUnavailableSince`)
   * before it is aborted: the target has not received the old primary's final WAL by then.
   */
  switchoverTimeoutMs: number;
  /**
   * Why elections are paused, if they are: a major upgrade has the instances stopped and runs the record's primary
   * (pod 0) alone on converted files. Nothing is elected, fenced or re-cloned meanwhile, and the record stays
   * published, so the upgraded pod starts as the primary (ADR 0009).
   */
  paused?: string;
  now: Date;
}

export type ReplicationAction =
  /** Commit a new term naming `primary`, guarded by the SampleDB's resourceVersion. */
  | {
      kind: 'elect';
      term: number;
      primary: string;
      reason: HandoverReason | 'Bootstrap' | 'SwitchoverAborted';
      handover?: Handover;
      /** Why, when the election undoes a switchover. */
      why?: string;
    }
  /** Write the record to the election ConfigMap. */
  | { kind: 'publish'; term: number; primary: string }
  /** Take the primary label off `pod` and, when `deletePod`, delete it so it stops taking writes. */
  | { kind: 'fence'; term: number; pod: string; deletePod: boolean; why: string }
  | { kind: 'mark-unavailable'; term: number; since: Date }
  | { kind: 'clear-unavailable'; term: number }
  /** `pg_promote()` on the record's primary. */
  | { kind: 'promote'; term: number; pod: string }
  /** The election is done: clear `handover`. */
  | { kind: 'complete-handover'; term: number; primary: string; handover: Handover }
  | { kind: 'label'; term: number; pod: string; role: 'primary' | 'replica' }
  /** Restart a standby that cannot follow the primary (its start script rewinds or clones it). */
  | { kind: 'rejoin'; term: number; pod: string; why: string }
  | { kind: 'refuse-switchover'; term: number; target: string; why: string }
  /** A switchover to `target` timed out: remove its annotation (so it is not started again) before electing back. */
  | { kind: 'abort-switchover'; term: number; target: string; why: string }
  /** The switchover asked for is done: remove the annotation, so a later failover is not switched back to it. */
  | { kind: 'clear-switchover'; term: number; target: string }
  | { kind: 'wait'; term: number; why: string; retryInMs?: number }
  | { kind: 'steady'; term: number };

export interface ReplicationPlan {
  next: ReplicationAction;
  /** How many pods the StatefulSet should run: never fewer than the primary's ordinal + 1. */
  replicas: number;
}

/** PostgreSQL's text form of an LSN ("16/B374D848") as a number of bytes. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not an LSN: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The published primary while the recorded one is going away: no pod starts as the primary. */
export const NOBODY = '';

const answersAsPrimary = (m: MemberObservation) =>
  m.pod === 'running' && m.sql !== undefined && !m.sql.inRecovery;
const isStandby = (m: MemberObservation) => m.pod === 'running' && m.sql?.inRecovery === true;

/** The primary is available: its pod runs, is Ready and answers as a primary. */
export function primaryAvailable(m: MemberObservation | undefined): boolean {
  return m !== undefined && answersAsPrimary(m) && m.ready;
}

/** Failover candidates, best first: standbys that answer, most advanced WAL first, then the lowest ordinal. */
export function rankCandidates(members: readonly MemberObservation[], exclude: string): MemberObservation[] {
  return members
    .filter((m) => m.name !== exclude && isStandby(m))
    .sort((a, b) => {
      const lsnA = a.sql?.lsn ?? 0n;
      const lsnB = b.sql?.lsn ?? 0n;
      if (lsnA !== lsnB) return lsnA > lsnB ? -1 : 1;
      return a.ordinal - b.ordinal;
    });
}

/** Why `target` cannot take over by a clean switchover, if it cannot. */
export function switchoverProblem(
  target: MemberObservation | undefined,
  instances: number,
): string | undefined {
  if (!target) return 'no such instance';
  if (target.ordinal >= instances) return `it is removed by instances: ${instances}`;
  if (target.pod !== 'running' || !target.ready) return 'it is not running and Ready';
  if (!target.sql) return 'it does not answer';
  if (!target.sql.inRecovery) return 'it is not a replica';
  if (!target.sql.streaming) return 'it is not streaming from the primary';
  return undefined;
}

/** The next step towards one labelled, published, available primary and following replicas. */
export function planReplication(obs: ReplicationObservation): ReplicationPlan {
  const { record, members } = obs;
  const term = record.term;
  const byName = (name: string | undefined) => members.find((m) => m.name === name);
  const primary = byName(record.primary);
  const replicas = Math.max(obs.instances, (primary?.ordinal ?? -1) + 1);
  const plan = (next: ReplicationAction): ReplicationPlan => ({ next, replicas });

  if (obs.paused && record.primary) return plan(pausedAction(obs, record.primary, primary));

  // Bootstrap: the first record names the instance already running as a primary (a SampleDB that had one pod
  // before), or ordinal 0, whose empty volume makes it the one that runs initdb.
  if (!record.primary || !primary) {
    const running = members.filter(answersAsPrimary);
    if (running.length > 1) {
      return plan({
        kind: 'wait',
        term,
        why: `${running.map((m) => m.name).join(' and ')} both run as primaries and no record says which is; refusing to choose`,
      });
    }
    const first = running[0] ?? [...members].sort((a, b) => a.ordinal - b.ordinal)[0];
    if (!first) return plan({ kind: 'wait', term, why: 'no instances observed' });
    return {
      next: { kind: 'elect', term: term + 1, primary: first.name, reason: 'Bootstrap' },
      replicas: obs.instances,
    };
  }

  // The pods decide their role at start from the published record, so it must never lag the status. While the
  // primary's pod is going away (being deleted, or gone) nobody is published: the StatefulSet recreates the pod at
  // once, and one that started as the primary again before the next election was published would write WAL past
  // the point where its successor's timeline forks, and could then only be re-cloned (seen on the real node). A
  // recorded primary that comes back as a standby is promoted again below; a lone instance has nobody to lose to.
  const leaving =
    (primary.pod === 'terminating' || primary.pod === 'absent') &&
    members.some((m) => m.name !== primary.name && m.pod !== 'absent');
  const publish = leaving ? NOBODY : primary.name;
  if (obs.published?.term !== term || obs.published.primary !== publish) {
    return plan({ kind: 'publish', term, primary: publish });
  }

  // Fence every other instance that claims the primary role, by label or by answering as a primary. The old
  // primary of a handover still running is deleted even when it does not answer: it may be cut off from us only.
  // Its pod carries the term it was labelled in; the pod the StatefulSet creates in its place carries none and
  // starts as a standby from the published record, so it is not fenced again while it starts.
  for (const m of members) {
    if (m.name === primary.name) continue;
    const oldPrimary =
      record.handover?.from === m.name &&
      m.pod === 'running' &&
      m.termLabel !== undefined &&
      m.termLabel < term &&
      m.sql?.inRecovery !== true;
    if (answersAsPrimary(m) || oldPrimary) {
      return plan({
        kind: 'fence',
        term,
        pod: m.name,
        deletePod: true,
        why: 'it is not the elected primary',
      });
    }
    if (m.roleLabel === 'primary') {
      return plan({
        kind: 'fence',
        term,
        pod: m.name,
        deletePod: false,
        why: 'it is labelled primary but not elected',
      });
    }
  }

  const available = primaryAvailable(primary);

  // An election in progress: promote the record's primary once it has what it must have.
  if (record.handover) {
    const { handover } = record;
    if (handover.reason !== 'Failover' && isStandby(primary)) {
      return plan(plannedHandover(obs, primary, byName(handover.from), handover));
    }
    if (isStandby(primary)) return plan({ kind: 'promote', term, pod: primary.name });
    if (answersAsPrimary(primary)) {
      return plan({ kind: 'complete-handover', term, primary: primary.name, handover });
    }
    // The candidate is gone too: fall through to a new failover once the delay has passed.
  }

  if (!available) {
    if (!record.handover && isStandby(primary)) {
      // The record names it and nobody else runs as a primary (fenced above): finish what the record says.
      return plan({ kind: 'promote', term, pod: primary.name });
    }
    if (!record.primaryUnavailableSince) return plan({ kind: 'mark-unavailable', term, since: obs.now });
    const waited = obs.now.getTime() - record.primaryUnavailableSince.getTime();
    // A primary whose pod is gone, or replaced by a fresh pod we never labelled, is not coming back as it was:
    // waiting would only let the StatefulSet's new pod start as the primary first. One being deleted is given
    // until its pod is gone (at most the delay), so the WAL its shutdown sends reaches the standbys. The delay is
    // for the ambiguous cases (not Ready, not answering).
    const podGone =
      primary.pod === 'absent' || (primary.pod === 'running' && primary.termLabel === undefined);
    if (!podGone && waited < obs.failoverDelayMs) {
      return plan({
        kind: 'wait',
        term,
        why: `primary ${primary.name} unavailable for ${Math.floor(waited / 1000)}s; failing over after ${obs.failoverDelayMs / 1000}s`,
        retryInMs: obs.failoverDelayMs - waited,
      });
    }
    const candidate = rankCandidates(members, primary.name)[0];
    if (!candidate) {
      return plan({
        kind: 'wait',
        term,
        why: `primary ${primary.name} is unavailable and no replica answers`,
        retryInMs: 1000,
      });
    }
    return plan({
      kind: 'elect',
      term: term + 1,
      primary: candidate.name,
      reason: 'Failover',
      handover: { from: primary.name, reason: 'Failover' },
    });
  }
  if (record.primaryUnavailableSince) return plan({ kind: 'clear-unavailable', term });

  if (obs.switchoverTo === primary.name) {
    return plan({ kind: 'clear-switchover', term, target: primary.name });
  }
  if (obs.switchoverTo && obs.switchoverTo !== primary.name) {
    const target = byName(obs.switchoverTo);
    const problem = switchoverProblem(target, obs.instances);
    if (problem || !target) {
      return plan({
        kind: 'refuse-switchover',
        term,
        target: obs.switchoverTo,
        why: problem ?? 'no such instance',
      });
    }
    return plan(handoverTo(target, primary, term, 'Switchover'));
  }

  // A scale down never removes the primary: hand over to a replica that stays, then scale.
  if (primary.ordinal >= obs.instances) {
    const target = members.find((m) => switchoverProblem(m, obs.instances) === undefined);
    if (!target) {
      return plan({
        kind: 'wait',
        term,
        why: `scaling down removes primary ${primary.name}; waiting for a streaming replica below ordinal ${obs.instances}`,
        retryInMs: 1000,
      });
    }
    return plan(handoverTo(target, primary, term, 'ScaleDown'));
  }

  if (primary.roleLabel !== 'primary' || primary.termLabel !== term) {
    return plan({ kind: 'label', term, pod: primary.name, role: 'primary' });
  }
  const unlabelled = members.find((m) => isStandby(m) && m.roleLabel !== 'replica');
  if (unlabelled) return plan({ kind: 'label', term, pod: unlabelled.name, role: 'replica' });

  // A standby that has received more WAL than the primary has written cannot follow it (it was ahead of the
  // promoted replica: asynchronous replication lost those commits).
  const primaryLsn = primary.sql?.lsn ?? 0n;
  const diverged = members.find((m) => isStandby(m) && !m.sql?.streaming && (m.sql?.lsn ?? 0n) > primaryLsn);
  if (diverged) {
    return plan({
      kind: 'rejoin',
      term,
      pod: diverged.name,
      why: 'it is ahead of the primary and cannot follow it',
    });
  }
  // One behind the primary that still does not stream after the bound cannot follow either: its WAL went past the
  // point where the primary's timeline forked (an old primary that wrote after the last WAL its successor
  // received), or the primary no longer has the WAL it needs. Nothing else would ever make it stream again.
  const stuck = members.find(
    (m) =>
      isStandby(m) &&
      !m.sql?.streaming &&
      m.notStreamingSince !== undefined &&
      obs.now.getTime() - m.notStreamingSince.getTime() >= obs.rejoinAfterMs,
  );
  if (stuck?.notStreamingSince) {
    const seconds = Math.floor((obs.now.getTime() - stuck.notStreamingSince.getTime()) / 1000);
    return plan({
      kind: 'rejoin',
      term,
      pod: stuck.name,
      why: `it has answered without streaming from the primary for ${seconds}s`,
    });
  }
  return plan({ kind: 'steady', term });
}

/**
 * While a major upgrade runs: keep the record published as it is (a pod that went away is not a reason to publish
 * nobody: the upgrade brings pod 0 back on purpose, and it must start as the primary), and label the primary once
 * it answers, so the client Service leads the upgrade's verification to it. Nothing else.
 */
function pausedAction(
  obs: ReplicationObservation,
  recorded: string,
  primary: MemberObservation | undefined,
): ReplicationAction {
  const term = obs.record.term;
  if (obs.published?.term !== term || obs.published.primary !== recorded) {
    return { kind: 'publish', term, primary: recorded };
  }
  if (
    primary &&
    answersAsPrimary(primary) &&
    (primary.roleLabel !== 'primary' || primary.termLabel !== term)
  ) {
    return { kind: 'label', term, pod: primary.name, role: 'primary' };
  }
  return { kind: 'wait', term, why: obs.paused ?? 'paused', retryInMs: 2000 };
}

const maxLsn = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * A switchover (or a scale down's handover) once the old primary is fenced: its pod was deleted, and its fast
 * shutdown sent every WAL record, up to its shutdown checkpoint, to the standbys still connected to it (they
 * stream from its pod directly, not through the client Service the fence empties: ADR 0008). Only the old primary
 * knows where its WAL ends: its recreated pod starts as a standby of the record and, before it streams anything,
 * reports the end of its shutdown checkpoint as its replay LSN. The target is promoted once it has received that
 * much, so no acknowledged commit is lost and the old primary can follow the new timeline without a re-clone. The
 * writes are stopped meanwhile, so it is bounded: a target that does not get there is not promoted, the old primary
 * is elected back (it has everything). An old primary that never answers again is handled like a lost primary: the
 * target, the most advanced standby the operator chose, is promoted.
 */
function plannedHandover(
  obs: ReplicationObservation,
  target: MemberObservation,
  from: MemberObservation | undefined,
  handover: Handover,
): ReplicationAction {
  const { record } = obs;
  const term = record.term;
  if (!record.primaryUnavailableSince) return { kind: 'mark-unavailable', term, since: obs.now };
  const waited = obs.now.getTime() - record.primaryUnavailableSince.getTime();
  const timedOut = waited >= obs.switchoverTimeoutMs;
  const seconds = `${Math.floor(waited / 1000)}s of ${obs.switchoverTimeoutMs / 1000}s`;
  if (from?.pod === 'terminating') {
    // Bounded by the pod's termination grace period: the kubelet ends it.
    return {
      kind: 'wait',
      term,
      why: `${handover.from} is shutting down; its last WAL must reach ${target.name} before the promotion`,
      retryInMs: 500,
    };
  }
  const received = target.sql?.lsn ?? 0n;
  if (!from || !isStandby(from)) {
    if (!timedOut) {
      return {
        kind: 'wait',
        term,
        why: `${handover.from} has stopped; waiting for it to answer as a standby to read where its WAL ends (${seconds})`,
        retryInMs: 500,
      };
    }
    return { kind: 'promote', term, pod: target.name };
  }
  const final = maxLsn(maxLsn(from.sql?.lsn ?? 0n, from.sql?.replayLsn ?? 0n), handover.lsn ?? 0n);
  if (received >= final) return { kind: 'promote', term, pod: target.name };
  const behind = `${target.name} has received WAL up to ${formatLsn(received)}, not the final ${formatLsn(final)} of ${handover.from}`;
  if (!timedOut) return { kind: 'wait', term, why: `${behind} (${seconds})`, retryInMs: 500 };
  const why = `${behind} after ${obs.switchoverTimeoutMs / 1000}s; ${handover.from} is elected back`;
  if (obs.switchoverTo === target.name) return { kind: 'abort-switchover', term, target: target.name, why };
  return { kind: 'elect', term: term + 1, primary: from.name, reason: 'SwitchoverAborted', why };
}

function handoverTo(
  target: MemberObservation,
  primary: MemberObservation,
  term: number,
  reason: 'Switchover' | 'ScaleDown',
): ReplicationAction {
  const handover: Handover = { from: primary.name, reason, lsn: primary.sql?.lsn ?? 0n };
  return { kind: 'elect', term: term + 1, primary: target.name, reason, handover };
}

/** An action may still be carried out: the record has not moved to another term since it was planned. */
export function stillCurrent(action: ReplicationAction, record: ElectionRecord): boolean {
  return action.kind === 'elect' ? record.term === action.term - 1 : record.term === action.term;
}

/** Lag in bytes of each standby behind the primary (0 when it is ahead: a diverged standby reports by rejoining). */
export function lagBytes(
  primary: MemberObservation | undefined,
  member: MemberObservation,
): number | undefined {
  if (!primary?.sql || !member.sql?.inRecovery || primary.sql.inRecovery) return undefined;
  const lag = primary.sql.lsn - member.sql.lsn;
  return Number(lag > 0n ? lag : 0n);
}
