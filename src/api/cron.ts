// Cron schedules, checked field by field from one table that yields both the CEL rules (admission) and their
// TypeScript twin, so the apiserver refuses what the operator's scheduler (croner, 5-part mode) would refuse.
//
// The grammar is classic cron: per field `*`, a value, a range `a-b` (a ≤ b), a step `*/n` or `a-b/n`, and lists of
// those; month and weekday names (any case); weekday 7 is Sunday. Deliberately not accepted, although croner reads
// them: `?` (croner replaces it with the time the schedule is parsed, not "any"), `L`, `W` and `#` (not portable),
// `a/n` (croner refuses it), runs of spaces or tabs between fields, and upper-case macros.

export interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** `min`-`max`, one leading zero allowed on one-digit values ("05", as in crontab files). */
  readonly values: string;
  /** 1-`max`, the steps. */
  readonly steps: string;
  /** Names for the values from `min`, e.g. JAN = 1. */
  readonly names?: readonly string[];
  /** A range may end on this name meaning `max` (SUN-SAT, SAT-SUN: Sunday is both 0 and 7). */
  readonly wrapName?: string;
}

export const CRON_FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59, values: '[0-5]?[0-9]', steps: '0?[1-9]|[1-5][0-9]' },
  { name: 'hour', min: 0, max: 23, values: '[01]?[0-9]|2[0-3]', steps: '0?[1-9]|1[0-9]|2[0-3]' },
  {
    name: 'day-of-month',
    min: 1,
    max: 31,
    values: '0?[1-9]|[12][0-9]|3[01]',
    steps: '0?[1-9]|[12][0-9]|3[01]',
  },
  {
    name: 'month',
    min: 1,
    max: 12,
    values: '0?[1-9]|1[0-2]',
    steps: '0?[1-9]|1[0-2]',
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  {
    name: 'day-of-week',
    min: 0,
    max: 7,
    values: '0?[0-7]',
    steps: '0?[1-7]',
    names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
    wrapName: 'SUN',
  },
];

export const CRON_MACROS = [
  'yearly',
  'annually',
  'monthly',
  'weekly',
  'daily',
  'midnight',
  'hourly',
] as const;

/** The shape: a macro, or five fields separated by single spaces. The fields' contents are checked by CEL. */
export const CRON_PATTERN = `^(@(${CRON_MACROS.join('|')})|[^\\s]+ [^\\s]+ [^\\s]+ [^\\s]+ [^\\s]+)$`;

// Names in any case without a regex flag, which CEL (RE2) and JavaScript spell differently.
const anyCase = (name: string) => [...name].map((c) => `[${c.toUpperCase()}${c.toLowerCase()}]`).join('');

/** The regular expression one field must match (before the range-order check); no backslashes, so CEL can quote it. */
export function cronFieldPattern(field: CronField): string {
  const value = `(${[field.values, ...(field.names ?? []).map(anyCase)].join('|')})`;
  const step = `/(${field.steps})`;
  const item = `([*](${step})?|${value}(-${value}(${step})?)?)`;
  return `^${item}(,${item})*$`;
}

const nameValues = (field: CronField) =>
  Object.fromEntries((field.names ?? []).map((name, i) => [name, field.min + i]));

function fieldValue(field: CronField, text: string, isEnd: boolean): number {
  const upper = text.toUpperCase();
  if (isEnd && upper === field.wrapName) return field.max;
  return nameValues(field)[upper] ?? Number.parseInt(text, 10);
}

// Compiled once per field: the twin runs for every SampleDB a program validates (1,000 constructs in one synth).
const compiledPatterns = new WeakMap<CronField, RegExp>();
function fieldRegExp(field: CronField): RegExp {
  let pattern = compiledPatterns.get(field);
  if (!pattern) {
    pattern = new RegExp(cronFieldPattern(field));
    compiledPatterns.set(field, pattern);
  }
  return pattern;
}

/** TypeScript twin of the CEL rule for `field` (index `index`) over a whole schedule. */
export function cronFieldHolds(field: CronField, index: number, schedule: string): boolean {
  if (schedule.startsWith('@')) return true;
  const parts = schedule.split(' ');
  if (parts.length !== CRON_FIELDS.length) return true; // the pattern reports the shape
  const text = parts[index] ?? '';
  if (!fieldRegExp(field).test(text)) return false;
  return text.split(',').every((item) => {
    const span = item.split('/')[0] ?? '';
    if (!span.includes('-')) return true;
    const [low = '', high = ''] = span.split('-');
    return fieldValue(field, low, false) <= fieldValue(field, high, true);
  });
}

const celMap = (entries: Record<string, number>) =>
  `{${Object.entries(entries)
    .map(([k, v]) => `'${k}': ${v}`)
    .join(', ')}}`;

function celValue(field: CronField, text: string, isEnd: boolean): string {
  if (!field.names) return `int(${text})`;
  const names = nameValues(field);
  const map = celMap(isEnd && field.wrapName ? { ...names, [field.wrapName]: field.max } : names);
  return `(${text}.upperAscii() in ${map} ? ${map}[${text}.upperAscii()] : int(${text}))`;
}

/** The CEL rule for `field`: `self` is the schedule string. */
export function cronFieldRule(field: CronField, index: number): string {
  const text = `self.split(' ')[${index}]`;
  const span = "item.split('/')[0]";
  const low = celValue(field, `${span}.split('-')[0]`, false);
  const high = celValue(field, `${span}.split('-')[1]`, true);
  return (
    `self.startsWith('@') || size(self.split(' ')) != ${CRON_FIELDS.length} || ` +
    `(${text}.matches('${cronFieldPattern(field)}') && ` +
    `${text}.split(',').all(item, !${span}.contains('-') || ${low} <= ${high}))`
  );
}

export function cronFieldMessage(field: CronField): string {
  const names = field.names ? ` or ${field.names[0]}-${field.names.at(-1)}` : '';
  return (
    `backup.schedule: the ${field.name} field must be * or ${field.min}-${field.max}${names}, a range a-b with ` +
    `a <= b, a step */n or a-b/n with n from 1 to ${field.max}, or a comma-separated list of them`
  );
}

// ---- a day that exists ----
// croner takes "0 0 31 2 *" and never runs it: no February has a 31st. Refused when the weekday is `*` (a weekday
// would make cron run on either, as croner does) and either the month is one value and the days a plain list, or the
// day is one value and the months a plain list. (Both lists at once would need a nested loop, which costs more than
// the apiserver's CEL budget allows; ranges and steps are not looked into.)

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;
const MONTHS = CRON_FIELDS[3]?.names ?? [];
const ONE_DAY = '^[0-9]+$';
const PLAIN_DAYS = '^[0-9]+(,[0-9]+)*$';
const ONE_MONTH = '^([0-9]+|[A-Za-z]+)$';
const PLAIN_MONTHS = '^([0-9]+|[A-Za-z]+)(,([0-9]+|[A-Za-z]+))*$';

/** Longest month by the month field's spellings: 1, 01, JAN → 31. */
const monthDays: Record<string, number> = Object.fromEntries(
  DAYS_IN_MONTH.flatMap((days, i) => [
    [String(i + 1), days],
    [String(i + 1).padStart(2, '0'), days],
    [MONTHS[i] ?? '', days],
  ]),
);

export const CRON_DAY_EXISTS_MESSAGE =
  'backup.schedule never runs: none of the listed months has the listed day (e.g. 31 in February)';

export function cronDayExistsHolds(schedule: string): boolean {
  const parts = schedule.split(' ');
  if (schedule.startsWith('@') || parts.length !== CRON_FIELDS.length || parts[4] !== '*') return true;
  const [days = '', months = ''] = [parts[2], parts[3]];
  const fits = (d: string, m: string) => Number.parseInt(d, 10) <= (monthDays[m.toUpperCase()] ?? 31);
  if (new RegExp(ONE_MONTH).test(months) && new RegExp(PLAIN_DAYS).test(days))
    return days.split(',').some((d) => fits(d, months));
  if (new RegExp(ONE_DAY).test(days) && new RegExp(PLAIN_MONTHS).test(months))
    return months.split(',').some((m) => fits(days, m));
  return true;
}

const celFits = (d: string, m: string) =>
  `int(${d}) <= (${m}.upperAscii() in ${celMap(monthDays)} ? ${celMap(monthDays)}[${m}.upperAscii()] : 31)`;
const DAYS_FIELD = "self.split(' ')[2]";
const MONTHS_FIELD = "self.split(' ')[3]";

export const CRON_DAY_EXISTS_RULE =
  `self.startsWith('@') || size(self.split(' ')) != ${CRON_FIELDS.length} || self.split(' ')[4] != '*' || ` +
  `(${MONTHS_FIELD}.matches('${ONE_MONTH}') && ${DAYS_FIELD}.matches('${PLAIN_DAYS}') ? ` +
  `${DAYS_FIELD}.split(',').exists(d, ${celFits('d', MONTHS_FIELD)}) : ` +
  `(${DAYS_FIELD}.matches('${ONE_DAY}') && ${MONTHS_FIELD}.matches('${PLAIN_MONTHS}') ? ` +
  `${MONTHS_FIELD}.split(',').exists(m, ${celFits(DAYS_FIELD, 'm')}) : true))`;
