// spec.replication.synchronous on the running instances (pure: the synchronous step asks and writes). The setting is
// never part of a server's start: with it from the first start, the image entrypoint's bootstrap server waited for
// ever on its CREATE DATABASE for a standby that could not exist yet (seen on the real node). So the primary starts
// asynchronous, and the operator sets synchronous_standby_names by ALTER SYSTEM (postgresql.auto.conf, per instance)
// once enough standbys stream from it. From then on it is kept, like a required quorum: a standby going away makes
// commits wait, it does not make them asynchronous. Every instance gets the same value, standbys first, so a
// promoted standby waits for its standbys from its first commit, with no window in which a failover loses one.
//
// Invariants, each held by a test of test/unit/sampledb/replication/synchronous.test.ts:
// - a quorum is turned on, or raised, only once the primary shows that many standbys of this SampleDB streaming;
// - once in force it is never lowered or dropped while the spec asks for it (only the list of names follows scaling);
// - synchronous: 0 turns it off at once, on every instance;
// - nothing is changed while the recorded primary does not answer as a primary;
// - standbys are changed before the primary.
import { REASONS, REPLICATION_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';

/** ALTER SYSTEM ON PARAMETER, the least privilege that can set it, is PostgreSQL 15's. */
export const MIN_SYNCHRONOUS_VERSION_NUM = 150000;

/** One row of a primary's pg_stat_replication. */
export interface WalSender {
  /** application_name: a standby's pod name (its primary_conninfo), pg_basebackup for a clone in progress. */
  name: string;
  state: string;
  /** async, potential, sync or quorum. */
  syncState: string;
}

/** What one instance answered. */
export interface SynchronousAnswer {
  inRecovery: boolean;
  /** current_setting('synchronous_standby_names'): what this server runs with now. */
  setting: string;
  versionNum: number;
  /** pg_stat_replication: empty on a standby. */
  senders: readonly WalSender[];
}

export interface SynchronousObservation {
  /** spec.replication.synchronous. */
  synchronous: number;
  /** The pod names of spec.instances, in ordinal order: the only names that may confirm a commit. */
  members: readonly string[];
  /** The record's primary. */
  primary?: string;
  /** Every pod that answered, by name. */
  answers: ReadonlyMap<string, SynchronousAnswer>;
}

export interface SettingChange {
  pod: string;
  setting: string;
  /** The change is to the primary: its commits start (or stop) waiting now. */
  primary: boolean;
}

export interface SynchronousDecision {
  /** In order: standbys first, the primary last. */
  changes: SettingChange[];
  condition: ConditionInput;
}

/** The value for `n` standbys out of `members`; '' for none. Names quoted: pod names have dashes. */
export function standbyNamesSetting(n: number, members: readonly string[]): string {
  if (n <= 0) return '';
  return `ANY ${n} (${members.map((m) => `"${m.replaceAll('"', '')}"`).join(', ')})`;
}

/** How many standbys a synchronous_standby_names value waits for (0: none). */
export function quorumOf(setting: string): number {
  const text = setting.trim();
  if (text === '') return 0;
  const counted = /^(?:(?:ANY|FIRST)\s+)?(\d+)\s*\(/i.exec(text);
  // A bare list ("a, b" or "*") is FIRST 1.
  return counted ? Number(counted[1]) : 1;
}

const condition = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
  type: REPLICATION_CONDITIONS.synchronousReplication,
  status,
  reason,
  message,
});

const asynchronousMessage =
  'spec.replication.synchronous is 0: commits are acknowledged without waiting for a replica.';

const list = (names: readonly string[]) => (names.length > 0 ? names.join(', ') : 'none');

export function decideSynchronous(obs: SynchronousObservation): SynchronousDecision {
  const { synchronous: n, members } = obs;
  const primary = obs.primary ? obs.answers.get(obs.primary) : undefined;
  if (!obs.primary || !primary || primary.inRecovery) {
    return {
      changes: [],
      condition:
        n === 0
          ? condition('False', REASONS.asynchronous, asynchronousMessage)
          : condition(
              'False',
              REASONS.waitingForPrimary,
              `The primary${obs.primary ? ` ${obs.primary}` : ''} does not answer as a primary yet; synchronous replication is checked once it does.`,
            ),
    };
  }
  if (n > 0 && primary.versionNum < MIN_SYNCHRONOUS_VERSION_NUM) {
    return {
      changes: [],
      condition: condition(
        'False',
        REASONS.synchronousUnsupported,
        `spec.replication.synchronous needs PostgreSQL 15 or later (server_version_num ${primary.versionNum}); commits are acknowledged without waiting for a replica.`,
      ),
    };
  }

  const desired = standbyNamesSetting(n, members);
  const ours = primary.senders.filter((s) => members.includes(s.name));
  const streaming = ours.filter((s) => s.state === 'streaming');
  const confirming = streaming.filter((s) => s.syncState === 'sync' || s.syncState === 'quorum');
  // Raised (or first turned on) only with that many streaming; once in force, kept as the spec says.
  const target =
    n === 0 || streaming.length >= n || quorumOf(primary.setting) >= n ? desired : primary.setting;

  const changes: SettingChange[] = [];
  for (const [pod, answer] of obs.answers) {
    if (pod !== obs.primary && answer.setting !== target)
      changes.push({ pod, setting: target, primary: false });
  }
  changes.sort((a, b) => a.pod.localeCompare(b.pod));
  if (primary.setting !== target) changes.push({ pod: obs.primary, setting: target, primary: true });

  if (n === 0) return { changes, condition: condition('False', REASONS.asynchronous, asynchronousMessage) };
  const names = (senders: readonly WalSender[]) => senders.map((s) => s.name);
  if (primary.setting === desired && confirming.length >= n) {
    return {
      changes,
      condition: condition(
        'True',
        REASONS.standbysConfirming,
        `${obs.primary} waits for ${n} of its replicas to confirm each commit (${desired}); confirming: ${list(names(confirming))}.`,
      ),
    };
  }
  const message =
    target === desired
      ? `${obs.primary} waits for ${n} replicas to confirm each commit (${desired}); confirming now: ${list(names(confirming))}. Commits wait until enough replicas stream.`
      : `${n} replicas must stream from ${obs.primary} before its commits wait for them; streaming now: ${list(names(streaming))}. Commits are acknowledged without waiting for a replica until then.`;
  return { changes, condition: condition('False', REASONS.waitingForStandbys, message) };
}
