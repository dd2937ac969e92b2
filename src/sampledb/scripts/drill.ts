// The drill's two data-path scripts, run as Jobs through the client Service as the superuser, in the `postgres`
// database (never the application's): the canary writes one row and waits until every replica replayed it, before
// the fault; the probe, started right after the fault, writes until a write is accepted, then checks the canary row
// and how long the replicas take to replay its write. fill-disk's probe starts on the full volume and first writes
// until one is refused (drill-fill.ts has the fill itself). Timestamps are the pod's clock, in epoch milliseconds.
import type { ProbeResult } from '../drill/plan.ts';
import { COMMON_FUNCTIONS } from './common.ts';

export interface DrillScriptSettings {
  host: string;
  port: number;
  /** Unique per run: `<namespace>/<drill>/<run>`, the canary row's key. */
  run: string;
  replicas: number;
  /** How long the probe tries to write, and then waits for the replicas. */
  probeSeconds?: number;
  replicationSeconds?: number;
  /**
   * fill-disk: the probe starts on a full volume, and first writes (chunks that need new blocks) until one is
   * refused, at most this long, so "writable again" is measured after a write really failed. 0: other drills.
   */
  fillSeconds?: number;
  terminationLog?: string;
}

export function drillScriptEnv(settings: DrillScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-drill',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: 'postgres',
    PGAPPNAME: 'sampledb-drill',
    PGCONNECT_TIMEOUT: '2',
    // A write that hangs on a dying server counts as refused, and the next attempt goes to whatever serves now.
    PGOPTIONS: '-c statement_timeout=3000',
    HOME: '/tmp',
    SAMPLEDB_DRILL_RUN: settings.run,
    SAMPLEDB_DRILL_REPLICAS: String(settings.replicas),
    SAMPLEDB_WAIT_SECONDS: '60',
    SAMPLEDB_PROBE_SECONDS: String(settings.probeSeconds ?? 300),
    SAMPLEDB_REPLICATION_SECONDS: String(settings.replicationSeconds ?? 120),
    SAMPLEDB_PROBE_FILL_SECONDS: String(settings.fillSeconds ?? 0),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

const REPLAYED = String.raw`
# Prints how many replicas stream and have replayed WAL up to $1.
replayed() {
  psql_run -tA -v lsn="$1" <<'SQL'
SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND replay_lsn >= :'lsn'::pg_lsn;
SQL
}

# Waits (at most SAMPLEDB_REPLICATION_SECONDS) until SAMPLEDB_DRILL_REPLICAS replicas replayed $1; sets caught.
wait_replayed() {
  until_s=$(( $(date +%s) + SAMPLEDB_REPLICATION_SECONDS ))
  caught=$(replayed "$1" || echo 0)
  while [ "$caught" -lt "$SAMPLEDB_DRILL_REPLICAS" ] && [ "$(date +%s)" -lt "$until_s" ]; do
    sleep 0.2
    caught=$(replayed "$1" || echo 0)
  done
}
`;

export const DRILL_CANARY_SCRIPT = `${COMMON_FUNCTIONS}${REPLAYED}${String.raw`
wait_for_server
lsn=$(psql_run -tA -v run="$SAMPLEDB_DRILL_RUN" <<'SQL'
CREATE TABLE IF NOT EXISTS sampledb_drill_canary (run text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now());
DELETE FROM sampledb_drill_canary WHERE written_at < now() - interval '30 days';
INSERT INTO sampledb_drill_canary (run) VALUES (:'run') ON CONFLICT (run) DO NOTHING;
SELECT pg_current_wal_lsn();
SQL
)
# Replication is asynchronous by default: the fault waits until the canary is on every replica, so a lost canary
# means the recovery lost replicated data, not the last unreplicated commit.
wait_replayed "$lsn"
[ "$caught" -ge "$SAMPLEDB_DRILL_REPLICAS" ] || fail "the canary row reached $caught of $SAMPLEDB_DRILL_REPLICAS replicas within $SAMPLEDB_REPLICATION_SECONDS seconds; no fault injected"
log "canary row $SAMPLEDB_DRILL_RUN written at $lsn, replayed by $caught replicas"
printf '{"canary":true}' > "$SAMPLEDB_TERMINATION_LOG"
`}`;

export const DRILL_PROBE_SCRIPT = `${COMMON_FUNCTIONS}${REPLAYED}${String.raw`
# One write through the client Service. fill-disk's also inserts a chunk of rows that needs new blocks (an update of
# one row usually fits the page it is on, and would be accepted on a full disk).
probe_write() {
  if [ "$SAMPLEDB_PROBE_FILL_SECONDS" -gt 0 ]; then
    psql_run -tA -v run="$SAMPLEDB_DRILL_RUN/probe" >/dev/null 2>/tmp/last-error <<'SQL'
CREATE TABLE IF NOT EXISTS sampledb_drill_fill (payload text NOT NULL);
INSERT INTO sampledb_drill_fill SELECT md5(random()::text) || md5(random()::text) FROM generate_series(1, 4000);
INSERT INTO sampledb_drill_canary (run) VALUES (:'run') ON CONFLICT (run) DO UPDATE SET written_at = now();
SQL
  else
    psql_run -tA -v run="$SAMPLEDB_DRILL_RUN/probe" >/dev/null 2>/tmp/last-error <<'SQL'
INSERT INTO sampledb_drill_canary (run) VALUES (:'run') ON CONFLICT (run) DO UPDATE SET written_at = now();
SQL
  fi
}

refused_at=null
if [ "$SAMPLEDB_PROBE_FILL_SECONDS" -gt 0 ]; then
  until_s=$(( $(date +%s) + SAMPLEDB_PROBE_FILL_SECONDS ))
  while [ "$(date +%s)" -lt "$until_s" ]; do
    if ! probe_write; then
      refused_at=$(now_ms)
      log "write refused on the full volume: $(tail -n 1 /tmp/last-error)"
      break
    fi
    sleep 0.2
  done
  [ "$refused_at" != null ] || log "no write was refused within $SAMPLEDB_PROBE_FILL_SECONDS seconds"
fi

deadline=$(( $(date +%s) + SAMPLEDB_PROBE_SECONDS ))
failed=0
[ "$refused_at" = null ] || failed=1
until probe_write
do
  failed=$((failed + 1))
  [ "$(date +%s)" -lt "$deadline" ] || fail "no write was accepted within $SAMPLEDB_PROBE_SECONDS seconds ($failed refused): $(tail -n 1 /tmp/last-error)"
  sleep 0.2
done
writable=$(now_ms)
log "write accepted after $failed refused"
present=$(psql_run -tA -v run="$SAMPLEDB_DRILL_RUN" <<'SQL'
SELECT count(*) FROM sampledb_drill_canary WHERE run = :'run';
SQL
)
[ "$SAMPLEDB_PROBE_FILL_SECONDS" -eq 0 ] || psql_run -tA -c 'DROP TABLE IF EXISTS sampledb_drill_fill' >/dev/null
lsn=$(psql_run -tA -c 'SELECT pg_current_wal_lsn()')
wait_replayed "$lsn"
caught_at=null
[ "$caught" -lt "$SAMPLEDB_DRILL_REPLICAS" ] || caught_at=$(now_ms)
canary=false
[ "$present" != 1 ] || canary=true
result=$(printf '{"writableAtMs":%s,"failedWrites":%s,"canaryPresent":%s,"replicasExpected":%s,"replicasCaughtUp":%s,"caughtUpAtMs":%s,"refusedAtMs":%s}' \
  "$writable" "$failed" "$canary" "$SAMPLEDB_DRILL_REPLICAS" "$caught" "$caught_at" "$refused_at")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;

/** The JSON object on the last line of a termination message, if any. */
export const lastJsonLine = (text: string | undefined): Record<string, unknown> | undefined => {
  const last = (text ?? '').trim().split('\n').at(-1)?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

export function parseCanaryResult(text: string | undefined): true | undefined {
  return lastJsonLine(text)?.canary === true ? true : undefined;
}

const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

export function parseProbeResult(text: string | undefined): ProbeResult | undefined {
  const v = lastJsonLine(text);
  if (!v) return undefined;
  const writableAtMs = count(v.writableAtMs);
  const failedWrites = count(v.failedWrites);
  const replicasExpected = count(v.replicasExpected);
  const replicasCaughtUp = count(v.replicasCaughtUp);
  if (
    writableAtMs === undefined ||
    failedWrites === undefined ||
    replicasExpected === undefined ||
    replicasCaughtUp === undefined ||
    typeof v.canaryPresent !== 'boolean'
  )
    return undefined;
  const caughtUpAtMs = count(v.caughtUpAtMs);
  const refusedAtMs = count(v.refusedAtMs);
  return {
    ...(refusedAtMs !== undefined ? { refusedAtMs } : {}),
    writableAtMs,
    failedWrites,
    canaryPresent: v.canaryPresent,
    replicasExpected,
    replicasCaughtUp,
    ...(caughtUpAtMs !== undefined ? { caughtUpAtMs } : {}),
  };
}
