// The replication roles Job: creates (or corrects) sampledb_replication (REPLICATION LOGIN, nothing else) and
// sampledb_failover (pg_monitor, EXECUTE on pg_promote and pg_reload_conf, and from PostgreSQL 15 ALTER SYSTEM on
// synchronous_standby_names only; nothing else) on the primary, as the superuser, with the passwords of their
// Secrets; the replicas get them by replication. Attributes are set explicitly, so a pre-existing role of either
// name cannot keep more rights. Idempotent. One Job per pair of Secrets and version of this script (the name carries
// a hash of both), as for the monitoring role: a SampleDB made before a grant was added gets it.
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { POSTGRES_PORT } from '../../api/index.ts';
import { PASSWORD_KEY } from '../credentials.ts';
import { FAILOVER_ROLE, REPLICATION_ROLE } from '../failover/instance-sql.ts';
import type { SampleDbInstance } from '../instance.ts';
import { childMeta } from '../meta.ts';
import { boundedName } from '../names.ts';
import { literalEnv, scriptJobPodSpec, secretEnv, superuserEnv } from '../pod.ts';
import { BT, COMMON_FUNCTIONS } from '../scripts/common.ts';
import { replicationNames } from './objects.ts';

export const REPLICATION_ROLES_CONTAINER = 'replication-roles';

export const REPLICATION_ROLES_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

# Passwords come from the environment into psql variables, never onto a command line; %L quotes them.
psql_run -d postgres -v replication_role="$SAMPLEDB_REPLICATION_ROLE" -v failover_role="$SAMPLEDB_FAILOVER_ROLE" <<'SQL'
SET client_min_messages = warning;
\set replication_password ${BT}printenv SAMPLEDB_REPLICATION_PASSWORD${BT}
\set failover_password ${BT}printenv SAMPLEDB_FAILOVER_PASSWORD${BT}
SELECT format('CREATE ROLE %I', r) FROM unnest(ARRAY[:'replication_role', :'failover_role']) AS r
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r)
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS CONNECTION LIMIT 10 PASSWORD %L', :'replication_role', :'replication_password')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN NOREPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS CONNECTION LIMIT 5 PASSWORD %L', :'failover_role', :'failover_password')
\gexec
SELECT format('GRANT pg_monitor TO %I', :'failover_role')
\gexec
SELECT format('GRANT EXECUTE ON FUNCTION pg_catalog.pg_promote(boolean, integer) TO %I', :'failover_role')
\gexec
SELECT format('GRANT EXECUTE ON FUNCTION pg_catalog.pg_reload_conf() TO %I', :'failover_role')
\gexec
SELECT format('GRANT ALTER SYSTEM ON PARAMETER synchronous_standby_names TO %I', :'failover_role')
 WHERE current_setting('server_version_num')::int >= 150000
\gexec
SQL
log "roles $SAMPLEDB_REPLICATION_ROLE and $SAMPLEDB_FAILOVER_ROLE are in place"
`}`;

export function replicationRolesJobName(instance: SampleDbInstance, secretUids: readonly string[]): string {
  const hash = createHash('sha256')
    .update(secretUids.join('/'))
    .update(REPLICATION_ROLES_SCRIPT)
    .digest('hex')
    .slice(0, 8);
  return boundedName(instance.name, `roles-${hash}`);
}

export function replicationRolesJob(instance: SampleDbInstance, secretUids: readonly string[]): V1Job {
  const names = replicationNames(instance);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, replicationRolesJobName(instance, secretUids), 'init'),
    spec: {
      backoffLimit: 6,
      activeDeadlineSeconds: 900,
      template: {
        metadata: { labels: { ...instance.labels.init } },
        spec: scriptJobPodSpec({
          name: REPLICATION_ROLES_CONTAINER,
          image: instance.spec.image,
          script: REPLICATION_ROLES_SCRIPT,
          env: [
            ...literalEnv({
              SAMPLEDB_SCRIPT: 'sampledb-replication-roles',
              // Pod 0, the bootstrap primary, directly: the client Service selects the primary only once the
              // operator can log in to it as sampledb_failover, which this Job creates.
              PGHOST: instance.podHost,
              PGPORT: String(POSTGRES_PORT),
              PGDATABASE: 'postgres',
              PGAPPNAME: 'sampledb-replication-roles',
              PGCONNECT_TIMEOUT: '10',
              HOME: '/tmp',
              SAMPLEDB_REPLICATION_ROLE: REPLICATION_ROLE,
              SAMPLEDB_FAILOVER_ROLE: FAILOVER_ROLE,
              SAMPLEDB_WAIT_SECONDS: '600',
              SAMPLEDB_TERMINATION_LOG: '/dev/termination-log',
            }),
            ...superuserEnv(instance),
            secretEnv('SAMPLEDB_REPLICATION_PASSWORD', names.replicationSecret, PASSWORD_KEY),
            secretEnv('SAMPLEDB_FAILOVER_PASSWORD', names.failoverSecret, PASSWORD_KEY),
          ],
        }),
      },
    },
  };
}
