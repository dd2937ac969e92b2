// fill-disk's two scripts, run as Jobs that mount the primary's data volume on its node (never through SQL). The
// fill script first proves the volume is the database's own file system (its size is bounded by the claim's, so a
// node's shared disk is refused before anything is written), then fills it with one ballast file, holds it for a
// bounded time and removes it itself: a full disk never outlives the Job, whatever happens to the operator. A TERM
// (the Job's deadline, a deleted pod) removes the ballast too. The release script removes a ballast a fill Job could
// not (its pod was killed with SIGKILL, its node restarted): the operator runs it before it ends such a run.
import { COMMON_FUNCTIONS } from './common.ts';
import { lastJsonLine } from './drill.ts';

/** The ballast file, at the root of the data volume (beside the data directory, never inside it). */
export const BALLAST_FILE = '.sampledb-drill-ballast';
/** The fill Job's readiness probe looks for this: the volume is full and the hold has begun. */
export const FILLED_MARKER = '/tmp/sampledb-filled';
/** How long the volume stays full. */
export const DEFAULT_FILL_HOLD_SECONDS = 30;
/** A file system up to twice the claim plus this is the database's own (small claims get a minimum-size one). */
export const FILL_SIZE_SLACK_BYTES = 512 * 2 ** 20;

export interface FillScriptSettings {
  /** Where the data volume is mounted in the Job. */
  volumeDir: string;
  /** The data directory, relative to the volume (its PG_VERSION proves it is the database's volume). */
  dataDir: string;
  /** The claim's capacity: a file system larger than twice this plus the slack is shared, and refused. */
  claimBytes: number;
  holdSeconds?: number;
  terminationLog?: string;
}

export function fillScriptEnv(settings: FillScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-drill-fill',
    SAMPLEDB_FILL_DIR: settings.volumeDir,
    SAMPLEDB_FILL_DATA_DIR: settings.dataDir,
    SAMPLEDB_FILL_BALLAST: BALLAST_FILE,
    SAMPLEDB_FILL_LIMIT_KIB: String(Math.floor((2 * settings.claimBytes + FILL_SIZE_SLACK_BYTES) / 1024)),
    SAMPLEDB_FILL_CLAIM_KIB: String(Math.floor(settings.claimBytes / 1024)),
    SAMPLEDB_FILL_HOLD_SECONDS: String(settings.holdSeconds ?? DEFAULT_FILL_HOLD_SECONDS),
    SAMPLEDB_FILL_MARKER: FILLED_MARKER,
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const DRILL_FILL_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
ballast="$SAMPLEDB_FILL_DIR/$SAMPLEDB_FILL_BALLAST"
release() {
  rm -f "$ballast"
}
trap release EXIT
trap 'release; exit 143' TERM INT HUP

[ -f "$SAMPLEDB_FILL_DIR/$SAMPLEDB_FILL_DATA_DIR/PG_VERSION" ] || fail "$SAMPLEDB_FILL_DIR holds no PostgreSQL data directory ($SAMPLEDB_FILL_DATA_DIR/PG_VERSION): not the database's volume, nothing was written"
release
# shellcheck disable=SC2046
set -- $(df -Pk "$SAMPLEDB_FILL_DIR" | tail -n 1)
total_kib=$2
free_kib=$4
if [ "$total_kib" -gt "$SAMPLEDB_FILL_LIMIT_KIB" ]; then
  msg="the data volume's file system holds $((total_kib / 1024)) MiB but its claim $((SAMPLEDB_FILL_CLAIM_KIB / 1024)) MiB: it is shared with more than this database (a directory on the node's disk?), and filling it would fill that too. Nothing was written."
  log "refused: $msg"
  printf '{"unsafe":"%s"}' "$msg" > "$SAMPLEDB_TERMINATION_LOG"
  exit 0
fi
log "filling $SAMPLEDB_FILL_DIR: $((free_kib / 1024)) of $((total_kib / 1024)) MiB free"
# fallocate takes the free space at once; a file system without it (or the blocks freed meanwhile) is topped up
# with zeros until the first "no space left".
fallocate -l "$((free_kib * 1024))" "$ballast" 2>/dev/null || fallocate -l "$(((free_kib - 1024) * 1024))" "$ballast" 2>/dev/null || true
dd if=/dev/zero of="$ballast" bs=65536 oflag=append conv=notrunc 2>/dev/null || true
filled=$(stat -c %s "$ballast")
filled_at=$(now_ms)
: > "$SAMPLEDB_FILL_MARKER"
# shellcheck disable=SC2046
set -- $(df -Pk "$SAMPLEDB_FILL_DIR" | tail -n 1)
log "ballast of $((filled / 1048576)) MiB written, $4 KiB left; holding for $SAMPLEDB_FILL_HOLD_SECONDS s"
# One-second sleeps, so a TERM is acted on (the ballast removed) within a second.
until_s=$(( $(date +%s) + SAMPLEDB_FILL_HOLD_SECONDS ))
while [ "$(date +%s)" -lt "$until_s" ]; do sleep 1; done
release
[ ! -e "$ballast" ] || fail "the ballast $ballast could not be removed"
released_at=$(now_ms)
log "ballast removed"
printf '{"filledBytes":%s,"filledAtMs":%s,"releasedAtMs":%s}' "$filled" "$filled_at" "$released_at" > "$SAMPLEDB_TERMINATION_LOG"
`}`;

export const DRILL_RELEASE_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
ballast="$SAMPLEDB_FILL_DIR/$SAMPLEDB_FILL_BALLAST"
rm -f "$ballast"
[ ! -e "$ballast" ] || fail "the ballast $ballast could not be removed"
log "no ballast left in $SAMPLEDB_FILL_DIR"
printf '{"released":true}' > "$SAMPLEDB_TERMINATION_LOG"
`}`;

/** What the fill Job reports: the volume was refused as shared, or filled, held and released. */
export type FillResult =
  | { unsafe: string }
  | { filledBytes: number; filledAtMs: number; releasedAtMs: number };

const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

export function parseFillResult(text: string | undefined): FillResult | undefined {
  const v = lastJsonLine(text);
  if (!v) return undefined;
  if (typeof v.unsafe === 'string' && v.unsafe) return { unsafe: v.unsafe };
  const filledBytes = count(v.filledBytes);
  const filledAtMs = count(v.filledAtMs);
  const releasedAtMs = count(v.releasedAtMs);
  if (filledBytes === undefined || filledAtMs === undefined || releasedAtMs === undefined) return undefined;
  return { filledBytes, filledAtMs, releasedAtMs };
}

export function parseReleaseResult(text: string | undefined): true | undefined {
  return lastJsonLine(text)?.released === true ? true : undefined;
}
