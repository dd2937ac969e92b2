// Value formats that a child object's validation, the container runtime or PostgreSQL would refuse, written once so
// the CRD's pattern or CEL rule and the TypeScript check (constructs, controller) say the same thing.

const DOMAIN_COMPONENT = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?';
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REPOSITORY = String.raw`(?:${DOMAIN_COMPONENT}(?:\.${DOMAIN_COMPONENT})*(?::[0-9]+)?\/)?${PATH_COMPONENT}(?:\/${PATH_COMPONENT})*`;

// A repository without tag or digest: registry host (with optional port) and path components, as in
// distribution's reference grammar, lower case.
export const IMAGE_REPOSITORY_PATTERN = `^${REPOSITORY}$`;

/**
 * A full image reference as containerd parses it (distribution's reference grammar, lower-case host): repository,
 * optional `:tag`, optional `@algorithm:hex` digest. Anything else makes the kubelet report InvalidImageName.
 */
export const IMAGE_REFERENCE_PATTERN = String.raw`^${REPOSITORY}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`;

/**
 * A postgresql.conf setting name as its parser reads it (guc-file.l: an identifier, or `extension.name` with exactly
 * one dot); anything else would not even parse, and the server would not start.
 */
export const PARAMETER_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)?$';

/** Characters postgresql.conf cannot hold in a value (no escape exists for a line break: it would start a setting). */
export const PARAMETER_VALUE_FORBIDDEN = String.raw`[\x00-\x1f\x7f]`;

/**
 * An annotation or label key as the apiserver validates it (IsQualifiedName): an optional DNS-subdomain prefix of at
 * most 253 characters and `/`, then a name of at most 63 characters. The lengths are checked separately (CEL keeps
 * the regular expression short, which keeps the rule's cost estimate low).
 */
export const QUALIFIED_NAME_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const QUALIFIED_NAME = new RegExp(QUALIFIED_NAME_PATTERN);

export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? '' : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  return QUALIFIED_NAME.test(key) && prefix.length <= 253 && name.length <= 63;
}

/** The same check in CEL, for a key bound to `k`. */
export const QUALIFIED_NAME_CEL = `k.matches('${QUALIFIED_NAME_PATTERN}') && size(k.split('/')[0]) <= 253 && size(k.split('/')[size(k.split('/')) - 1]) <= 63`;

/**
 * Role names PostgreSQL refuses in CREATE ROLE (`pg_*`, `public`, `none`), plus `postgres`: the image's bootstrap
 * superuser, which the application's owner role must never be.
 */
export const RESERVED_ROLE_NAMES = ['public', 'none', 'postgres'] as const;
export const RESERVED_ROLE_PREFIX = 'pg_';

export function isReservedRoleName(name: string): boolean {
  return name.startsWith(RESERVED_ROLE_PREFIX) || (RESERVED_ROLE_NAMES as readonly string[]).includes(name);
}

/**
 * Databases that exist in every cluster and must not become the application's: template0 accepts no connections,
 * template1 is copied into every new database, and `postgres` is the maintenance database the operator's Jobs
 * connect to (an owner could drop it, and would then own every tool's default database).
 */
export const RESERVED_DATABASE_NAMES = ['postgres', 'template0', 'template1'] as const;

/**
 * Zone names that Go's time.LoadLocation (what CEL's getHours(zone) uses on the apiserver) accepts but the operator's
 * scheduler (Intl, ICU's zone data) does not: Go's own `Local`, tzdata's `Factory`, and the `posix/`, `right/` copies
 * and `posixrules` file of a system zoneinfo directory.
 */
export const NON_SCHEDULER_ZONES = ['Local', 'Factory', 'posixrules'] as const;
const NON_SCHEDULER_ZONE_PREFIXES = ['posix/', 'right/'] as const;

/** The CEL rule on a time zone string; evaluating it fails ("unknown time zone") for a zone the apiserver lacks. */
export const TIME_ZONE_CEL =
  `!(self in [${NON_SCHEDULER_ZONES.map((z) => `'${z}'`).join(', ')}]) && ` +
  `!self.startsWith('${NON_SCHEDULER_ZONE_PREFIXES[0]}') && !self.startsWith('${NON_SCHEDULER_ZONE_PREFIXES[1]}') && ` +
  "timestamp('2000-01-01T00:00:00Z').getHours(self) >= 0";

/**
 * Whether `zone` is an IANA zone both the apiserver and the scheduler know, as exactly as TypeScript can tell: Intl
 * (which the scheduler uses) must know it, and its spelling must be the database's, because Go looks zones up by exact
 * name while ICU ignores case. ICU canonicalizes aliases (US/Pacific → America/Los_Angeles), so for an alias only the
 * usual capitalization of each part is checked.
 */
export function isSchedulerTimeZone(zone: string): boolean {
  if ((NON_SCHEDULER_ZONES as readonly string[]).includes(zone)) return false;
  if (NON_SCHEDULER_ZONE_PREFIXES.some((prefix) => zone.startsWith(prefix))) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  if (resolved.toLowerCase() === zone.toLowerCase()) return resolved === zone;
  return zone.split('/').every((part) => /^[A-Z]/.test(part));
}

/**
 * The smallest data volume PostgreSQL can initialize and run on: initdb writes about 40 MB (three template
 * databases, catalogs and the first 16 MB WAL segment), the application database adds its own copy, and WAL
 * needs room for another segment before the first checkpoint recycles one.
 */
export const MIN_STORAGE_SIZE = '128Mi';

/**
 * The smallest memory limit PostgreSQL starts under with the derived settings (shared_buffers is a quarter of it,
 * and the postmaster, checkpointer, WAL writer and a backend need about 30 MB together): below it the container is
 * OOM-killed during initdb or the first connections.
 */
export const MIN_MEMORY_LIMIT = '64Mi';
