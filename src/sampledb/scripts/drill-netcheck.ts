// isolate-primary's enforcement check, run as a Job whose pod a deny-all egress NetworkPolicy selects: it asks the
// primary's PostgreSQL port whether it answers (pg_isready: no credential, no session, nothing written). A network
// that enforces NetworkPolicy stops the connection, so the attempts go unanswered; one that does not lets them
// through, and the server answers. The apiserver stores a NetworkPolicy either way, so this is the only way to know.
// A policy can take a moment to reach a new pod's packets: the check goes on until several attempts in a row were
// unanswered, or its time is up.
import { COMMON_FUNCTIONS } from './common.ts';
import { lastJsonLine } from './drill.ts';

/** How long the check tries before it decides that nothing stops the connection. */
export const NETCHECK_SECONDS = 20;
/** Unanswered attempts in a row that prove the policy is enforced. */
export const NETCHECK_UNANSWERED_IN_A_ROW = 3;

export interface NetcheckSettings {
  /** The primary pod's IP and PostgreSQL port (an IP: DNS is egress too, and is denied). */
  host: string;
  port: number;
  seconds?: number;
  terminationLog?: string;
}

export interface NetcheckResult {
  enforced: boolean;
  /** Attempts the server answered (accepting or rejecting connections). */
  answered: number;
  unanswered: number;
}

export function netcheckScriptEnv(settings: NetcheckSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-drill-netcheck',
    SAMPLEDB_NETCHECK_HOST: settings.host,
    SAMPLEDB_NETCHECK_PORT: String(settings.port),
    SAMPLEDB_NETCHECK_SECONDS: String(settings.seconds ?? NETCHECK_SECONDS),
    SAMPLEDB_NETCHECK_IN_A_ROW: String(NETCHECK_UNANSWERED_IN_A_ROW),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
    HOME: '/tmp',
  };
}

export const DRILL_NETCHECK_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
deadline=$(( $(date +%s) + SAMPLEDB_NETCHECK_SECONDS ))
answered=0
unanswered=0
in_a_row=0
enforced=false
while [ "$(date +%s)" -lt "$deadline" ]; do
  rc=0
  pg_isready -q -t 2 -h "$SAMPLEDB_NETCHECK_HOST" -p "$SAMPLEDB_NETCHECK_PORT" -d postgres || rc=$?
  case $rc in
    0|1) answered=$((answered + 1)); in_a_row=0 ;;
    2) unanswered=$((unanswered + 1)); in_a_row=$((in_a_row + 1)) ;;
    *) fail "pg_isready could not try $SAMPLEDB_NETCHECK_HOST:$SAMPLEDB_NETCHECK_PORT (exit $rc)" ;;
  esac
  if [ "$in_a_row" -ge "$SAMPLEDB_NETCHECK_IN_A_ROW" ]; then
    enforced=true
    break
  fi
  sleep 0.5
done
log "$SAMPLEDB_NETCHECK_HOST:$SAMPLEDB_NETCHECK_PORT answered $answered times, $unanswered unanswered: enforced=$enforced"
result=$(printf '{"enforced":%s,"answered":%s,"unanswered":%s}' "$enforced" "$answered" "$unanswered")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;

const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

export function parseNetcheckResult(text: string | undefined): NetcheckResult | undefined {
  const v = lastJsonLine(text);
  const answered = count(v?.answered);
  const unanswered = count(v?.unanswered);
  if (typeof v?.enforced !== 'boolean' || answered === undefined || unanswered === undefined)
    return undefined;
  return { enforced: v.enforced, answered, unanswered };
}
