// The cron schedule field, as one schema with its CEL rules and their TypeScript twins: backups
// (SampleDB.spec.backup.schedule) and drills (SampleDBDrill.spec.schedule) accept exactly the same schedules.
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
import { withRules } from './schema-kit.ts';

const CRON_SYNTAX =
  'five fields separated by single spaces (minute hour day-of-month month ' +
  'day-of-week; *, values, ranges a-b, steps */n and a-b/n, lists; JAN-DEC and SUN-SAT names) or a ' +
  'macro (@yearly, @monthly, @weekly, @daily, @hourly)';

/** A five-field cron schedule (or macro); `what` starts the description ("Cron schedule for backups"). */
export function CronSchedule(what: string, after: string) {
  return withRules(
    Type.String({
      pattern: CRON_PATTERN,
      maxLength: 128,
      description: `${what}: ${CRON_SYNTAX}, ${after}`,
    }),
    CRON_FIELDS.map((field, index) => ({
      rule: cronFieldRule(field, index),
      message: cronFieldMessage(field),
      holds: (self: string) => cronFieldHolds(field, index, self),
    })).concat([{ rule: CRON_DAY_EXISTS_RULE, message: CRON_DAY_EXISTS_MESSAGE, holds: cronDayExistsHolds }]),
  );
}
