// Version changes of a SampleDB: which ones admission allows, and what the status says about an upgrade.
//
// A minor version (or image) change is a rolling restart. Raising the major version is an upgrade the operator runs
// (pg_upgrade, see docs/adr/0009-major-upgrades.md). Lowering it is refused: a server refuses the data files of a
// newer major version, and there is no way back other than a restore of a backup into a new SampleDB.
import { Type } from '@sinclair/typebox';
import type { ValidationRule } from './schema-kit.ts';

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
        'Where the upgrade is: Backup, Stopping, Preflight, Upgrade, Starting, Verify, Cleanup, Done, RollingBack, Failed.',
    }),
    backup: Type.Optional(
      Type.String({ description: 'The pre-upgrade SampleDBBackup (kept after the upgrade).' }),
    ),
    message: Type.Optional(Type.String({ description: 'What failed, when the upgrade failed.' })),
  },
  { description: 'The last major version upgrade.' },
);
