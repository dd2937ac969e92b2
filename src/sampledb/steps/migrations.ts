// spec.migrations: after the database is initialized and ready (and after an upgrade completes), one Job applies
// the list; status.migrations records what the database applied; the Migrated condition says where it stands, and
// every refusal or failure is also an Event. The decisions are in migrations/plan.ts.
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { CONTAINERS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { jobState } from '../job-state.ts';
import { migrationsJob, migrationsJobName, migrationsTargetPod } from '../migrations/job.ts';
import { MIGRATION_REASONS, type MigrationsObservation, planMigrations } from '../migrations/plan.ts';
import { CONFIGMAPS, JOBS, PODS } from '../resources.ts';
import { parseMigrateResult } from '../scripts/migrate.ts';
import { templateImage } from '../upgrade/workload.ts';
import type { Step } from './context.ts';

export const MIGRATED_CONDITION = 'Migrated';

const terminated = (pods: readonly V1Pod[]) =>
  pods
    .map((p) => p.status?.containerStatuses?.[0]?.state?.terminated)
    .filter((t) => t !== undefined)
    .at(-1);

export const applyMigrations: Step = {
  name: 'migrations',
  writes: ['create-once', 'event'],
  async run({ instance, observed, view, write, now }) {
    const entries = instance.object.spec.migrations ?? [];
    const applied = instance.object.status?.migrations ?? [];
    const checksums: Record<string, string | undefined> = {};
    for (const e of entries) {
      const sql = view.get(CONFIGMAPS, instance.namespace, e.configMap.name)?.data?.[e.configMap.key];
      checksums[e.name] = sql === undefined ? undefined : createHash('sha256').update(sql).digest('hex');
    }
    const migrations = entries.flatMap((e) => {
      const checksum = checksums[e.name];
      return checksum ? [{ name: e.name, checksum }] : [];
    });
    const jobName = migrationsJobName(instance.name, migrations);
    const job =
      migrations.length === entries.length ? view.get(JOBS, instance.namespace, jobName) : undefined;
    const pods = job ? view.ownedBy(PODS, job.metadata.uid) : [];
    const last = terminated(pods);
    const result = last?.message ? parseMigrateResult(last.message) : undefined;
    // The primary the replication step elected in this reconcile (else the recorded one, else pod 0): the Job writes.
    const primary = migrationsTargetPod(instance, observed.replication?.primary);
    const target =
      primary === instance.names.pod ? observed.pod : view.get(PODS, instance.namespace, primary);
    const podReady = Boolean(
      target?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    const obs: MigrationsObservation = {
      entries,
      checksums,
      applied,
      databaseReady:
        (observed.initJob?.status?.succeeded ?? 0) > 0 &&
        podReady &&
        !observed.upgrading &&
        (!observed.majorUpgrade || observed.majorUpgrade.plan.step === 'Done') &&
        Boolean(observed.serverVersion),
      ...(job
        ? {
            job: {
              state: jobState(job),
              ...(result ? { result } : {}),
              ...(last?.finishedAt ? { finishedAt: new Date(last.finishedAt).toISOString() } : {}),
              ...(last?.message && !result ? { message: last.message.trim().slice(-1024) } : {}),
            },
          }
        : {}),
      now: now(),
    };
    const action = planMigrations(obs);
    const previous = instance.object.status?.conditions?.find((c) => c.type === MIGRATED_CONDITION);
    const condition = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
      type: MIGRATED_CONDITION,
      status,
      reason,
      message,
    });
    switch (action.kind) {
      case 'none':
        return undefined;
      case 'done': {
        const message = `${action.applied.length} migrations applied; the last is ${action.applied.at(-1)?.name ?? 'none'}.`;
        if (previous?.reason !== MIGRATION_REASONS.applied || previous.message !== message) {
          await write.event({
            regarding: instance.object,
            type: 'Normal',
            reason: MIGRATION_REASONS.applied,
            action: 'Migrate',
            note: message,
          });
        }
        return {
          observed: { migrations: action.applied },
          conditions: [condition('True', MIGRATION_REASONS.applied, message)],
        };
      }
      case 'wait':
        return { conditions: [condition('False', action.reason, action.message)] };
      case 'create-job': {
        const image =
          templateImage(observed.statefulSet) ??
          target?.spec?.containers.find((c) => c.name === CONTAINERS.postgres)?.image;
        if (!image) {
          return {
            conditions: [
              condition(
                'False',
                MIGRATION_REASONS.waitingForDatabase,
                'Migrations wait for the database pod.',
              ),
            ],
          };
        }
        await write.createOnce(JOBS, migrationsJob(instance, image, action.migrations, primary));
        const message = `Job ${jobName} applies migrations ${action.pending.join(', ')}.`;
        await write.event({
          regarding: instance.object,
          type: 'Normal',
          reason: MIGRATION_REASONS.applying,
          action: 'Migrate',
          note: message,
        });
        return { conditions: [condition('False', MIGRATION_REASONS.applying, message)] };
      }
      case 'wait-job':
        return {
          conditions: [
            condition(
              'False',
              MIGRATION_REASONS.applying,
              `Job ${jobName} applies migrations ${action.pending.join(', ')}.`,
            ),
          ],
        };
      case 'refuse': {
        if (previous?.reason !== action.reason || previous.message !== action.message) {
          await write.event({
            regarding: instance.object,
            type: 'Warning',
            reason: action.reason,
            action: 'Migrate',
            note: action.message,
          });
        }
        return {
          observed: { migrations: action.applied },
          conditions: [condition('False', action.reason, action.message)],
        };
      }
    }
  },
};
