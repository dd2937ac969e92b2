// Version changes of a SampleDB: which ones admission allows, and what the status says about an upgrade.
//
// A minor version (or image) change is a rolling restart. Raising the major version is an upgrade the operator runs
// (pg_upgrade, see docs/adr/0009-major-upgrades.md). Lowering it is refused: a server refuses the data files of a
// newer major version, and there is no way back other than a restore of a backup into a new SampleDB.
import { Type } from '@sinclair/typebox';
import {
  CRON_DAY_EXISTS_MESSAGE,
  CRON_DAY_EXISTS_RULE,
  CRON_FIELDS,
  CRON_PATTERN,
  cronDayExistsHolds,
  cronFieldHolds,
  cronFieldMessage,
  cronFieldRule,
} from './cron.ts';
import { type ValidationRule, withRules } from './schema-kit.ts';

const majorOf = (version: string | undefined) => Number.parseInt((version ?? '').split('.')[0] ?? '', 10);

const CEL_MAJOR = (path: string) => `int(${path}.split('.')[0])`;

interface VersionedObject {
  spec?: { version?: string };
  status?: { currentVersion?: string };
}

/**
 * The lowest major version an update may set: the major the server reports running (status.currentVersion), or,
 * before it reported one, the major the spec had. Going back to the running major after a failed upgrade is
 * allowed (the server still runs it); going below it is not.
 */
export function lowestAllowedMajor(old: VersionedObject): number {
  const running = majorOf(old.status?.currentVersion);
  return Number.isNaN(running) ? majorOf(old.spec?.version) : running;
}

export const MAJOR_DOWNGRADE_MESSAGE =
  'the PostgreSQL major version may not go below the major the server runs (status.currentVersion): a server ' +
  'refuses the data files of a newer major version. Raising it is an upgrade the operator runs (pg_upgrade); to go ' +
  'back, restore a backup into a new SampleDB with the older version';

/** Root rule (it reads status): a spec update may not lower the major version below the running one. */
export const MAJOR_DOWNGRADE_RULE: ValidationRule<VersionedObject> = {
  rule:
    `self.spec.version == oldSelf.spec.version || ${CEL_MAJOR('self.spec.version')} >= ` +
    `(has(oldSelf.status) && has(oldSelf.status.currentVersion) && oldSelf.status.currentVersion.matches('^[0-9]+(\\\\.|$)') ` +
    `? ${CEL_MAJOR('oldSelf.status.currentVersion')} : ${CEL_MAJOR('oldSelf.spec.version')})`,
  message: MAJOR_DOWNGRADE_MESSAGE,
  fieldPath: '.spec.version',
  reportAt: 'spec.version',
  reason: 'FieldValueForbidden',
  holdsOnUpdate: (self, old) =>
    self.spec?.version === old.spec?.version || majorOf(self.spec?.version) >= lowestAllowedMajor(old),
};

export const UPGRADE_METHODS = ['pg_upgrade'] as const;
export type UpgradeMethod = (typeof UPGRADE_METHODS)[number];

/** `status.upgrade`: the last major upgrade, while it runs and after. */
export const UpgradeStatusSchema = Type.Object(
  {
    fromMajor: Type.Integer({ description: 'The major version the data files had before the upgrade.' }),
    toMajor: Type.Integer({ description: 'The major version the upgrade goes to.' }),
    step: Type.String({
      description:
        'Where the upgrade is: Backup, Stopping, Preflight, Upgrade, Starting, Verify, Cleanup, Done, RollingBack, Failed; ' +
        'Abandoned once spec.version went back to the old major before the upgrade Job.',
    }),
    attempt: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Which attempt at this upgrade runs (absent: 1). A retry (annotation sampledb.io/retry-upgrade) or raising ' +
          'the major again after an abandoned attempt starts the next one, with a backup and Jobs of its own.',
      }),
    ),
    retryRequest: Type.Optional(
      Type.String({
        description:
          'The last value of the annotation sampledb.io/retry-upgrade the operator has seen (acted on if the upgrade had failed).',
      }),
    ),
    backup: Type.Optional(
      Type.String({ description: 'The pre-upgrade SampleDBBackup (kept after the upgrade).' }),
    ),
    message: Type.Optional(Type.String({ description: 'What failed, when the upgrade failed.' })),
    waitingUntil: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the maintenance window opens (step WaitingForWindow).',
      }),
    ),
  },
  { description: 'The last major version upgrade.' },
);

/** `spec.upgrade`: how and when major upgrades run. */
export const UpgradeSpecSchema = Type.Object(
  {
    maintenanceWindow: Type.Optional(
      withRules(
        Type.Object(
          {
            schedule: withRules(
              Type.String({
                pattern: CRON_PATTERN,
                maxLength: 128,
                description:
                  'When the window opens: a five-field cron schedule or a macro, as backup.schedule, e.g. "0 2 * * SUN".',
              }),
              CRON_FIELDS.map((field, index) => ({
                rule: cronFieldRule(field, index),
                message: cronFieldMessage(field),
                holds: (self: string) => cronFieldHolds(field, index, self),
              })).concat([
                { rule: CRON_DAY_EXISTS_RULE, message: CRON_DAY_EXISTS_MESSAGE, holds: cronDayExistsHolds },
              ]),
            ),
            duration: Type.String({
              pattern: '^[0-9]+(d|h|m)$',
              maxLength: 16,
              description: 'How long the window stays open, e.g. "4h". A started upgrade runs to its end.',
            }),
            timezone: Type.Optional(
              Type.String({
                pattern: '^[A-Za-z_][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
                maxLength: 64,
                description: 'IANA time zone of the schedule, e.g. "Europe/Berlin". Default: UTC.',
              }),
            ),
          },
          {
            description:
              'A major upgrade starts (takes its backup) only inside this window; status.upgrade.waitingUntil says ' +
              'when it opens next. Minor upgrades do not wait. Default: no window, upgrades start at once.',
          },
        ),
        [
          {
            rule: 'int(self.duration.substring(0, size(self.duration) - 1)) >= 1',
            message: 'upgrade.maintenanceWindow.duration must be at least 1m, e.g. "4h"',
            fieldPath: '.duration',
            holds: (self: { duration: string }) => Number.parseInt(self.duration, 10) >= 1,
          },
        ],
      ),
    ),
  },
  { description: 'Major version upgrades (see docs/upgrades.md).' },
);
