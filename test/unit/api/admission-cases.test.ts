// The shared table of field cases against the TypeScript side: the validator (the CEL rules' twins), the CRD's
// plain schema from dist/, and the consumers the rules protect (croner for schedules and zones, the defaults for
// the Pod's request ≤ limit rule). test/integration/api/crds.test.ts holds the same table against the apiserver.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { Cron } from 'croner';
import { parseAllDocuments } from 'yaml';
import {
  CRON_FIELDS,
  compareQuantities,
  cronFieldHolds,
  isSchedulerTimeZone,
  resolveSampleDbSpec,
  sampleDbValidator,
} from '../../../src/api/index.ts';
import { FIELD_CASES, VALID_CREATES } from '../../support/invalid-sampledbs.ts';

const sampleDb = (spec: Record<string, unknown>) => ({
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDB',
  metadata: { name: 'db' },
  spec,
});

const crdSchema = (() => {
  const docs = parseAllDocuments(
    readFileSync(new URL('../../../dist/0000-sampledb-crds.k8s.yaml', import.meta.url), 'utf8'),
  ).map((doc) => doc.toJSON());
  const crd = docs.find((doc) => doc.metadata.name === 'sampledbs.sampledb.io');
  return new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(
    crd.spec.versions[0].schema.openAPIV3Schema,
  );
})();

/** What the operator's scheduler does with a schedule: undefined when it takes it, else croner's complaint. */
function cronerRefusal(schedule: string, timezone = 'UTC'): string | undefined {
  try {
    new Cron(schedule, { paused: true, mode: '5-part', timezone }).nextRun(new Date('2026-01-01T00:00:00Z'));
    return undefined;
  } catch (err) {
    return String(err);
  }
}

describe('field cases (one table for the CEL rules and their twins)', () => {
  it(`accepts all ${VALID_CREATES.length} valid values, in the TypeScript validator and the CRD schema`, () => {
    assert.ok(VALID_CREATES.length >= 40);
    for (const valid of VALID_CREATES) {
      assert.deepEqual(sampleDbValidator.validate(sampleDb(valid.spec)), [], valid.title);
      assert.ok(crdSchema(sampleDb(valid.spec)), `${valid.title}: ${JSON.stringify(crdSchema.errors)}`);
    }
  });

  it('refuses every refused value on its own field, and only there', () => {
    for (const cases of FIELD_CASES) {
      for (const value of Object.keys(cases.refuse)) {
        const errors = sampleDbValidator.validate(sampleDb(cases.spec(value)));
        assert.ok(errors.length > 0, `${cases.label} ${JSON.stringify(value)} accepted`);
        assert.deepEqual(
          [...new Set(errors.map((e) => e.field))],
          [cases.field],
          `${cases.label} ${JSON.stringify(value)}: ${JSON.stringify(errors)}`,
        );
      }
    }
  });
});

describe('backup schedules against croner (the scheduler they feed)', () => {
  const schedules = FIELD_CASES.find((c) => c.field === 'spec.backup.schedule');
  assert.ok(schedules);
  const admitted = (schedule: string) =>
    sampleDbValidator.validate(sampleDb(schedules.spec(schedule))).length === 0;

  it('croner takes every accepted schedule, and it runs', () => {
    for (const schedule of schedules.accept) {
      assert.equal(cronerRefusal(schedule), undefined, schedule);
      const next = new Cron(schedule, { paused: true, mode: '5-part', timezone: 'UTC' }).nextRun(
        new Date('2026-01-01T00:00:00Z'),
      );
      assert.ok(next, `${schedule} has a next run`);
    }
  });

  it('refuses a schedule whose days no listed month has, which croner takes and never runs', () => {
    for (const schedule of ['0 0 31 2 *', '0 0 30,31 FEB *', '0 0 31 4,6,09,11 *']) {
      assert.ok(schedule in schedules.refuse, schedule);
      assert.equal(cronerRefusal(schedule), undefined, schedule);
      assert.equal(new Cron(schedule, { paused: true, mode: '5-part' }).nextRun(), null, schedule);
      const errors = sampleDbValidator.validate(sampleDb(schedules.spec(schedule)));
      assert.match(errors[0]?.message ?? '', /never runs/);
    }
  });

  it('refuses what croner refuses, and says which field is wrong', () => {
    const cronerRefuses = Object.keys(schedules.refuse).filter((s) => cronerRefusal(s) !== undefined);
    assert.ok(cronerRefuses.length >= 15, 'the table exercises croner refusals');
    for (const schedule of cronerRefuses) {
      const errors = sampleDbValidator.validate(sampleDb(schedules.spec(schedule)));
      assert.ok(errors.length > 0, `${schedule}: croner refuses it, admission must too`);
    }
    const fieldMessages = sampleDbValidator
      .validate(sampleDb(schedules.spec('0 25 * * *')))
      .map((e) => e.message);
    assert.equal(fieldMessages.length, 1);
    assert.match(fieldMessages[0] ?? '', /the hour field must be \* or 0-23/);
  });

  it('never admits a schedule croner refuses, over 20000 generated schedules', () => {
    // Deterministic generator of near-miss fields: values just inside and outside each range, names, steps,
    // ranges in both orders, lists and stray characters.
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]) => items[random(items.length)] as T;
    const atom = (index: number) => {
      const field = CRON_FIELDS[index] as (typeof CRON_FIELDS)[number];
      const numbers = [
        field.min - 1,
        field.min,
        field.min + 1,
        field.max - 1,
        field.max,
        field.max + 1,
        0,
        7,
      ];
      const names = [...(field.names ?? []), 'jan', 'sun', 'XYZ'];
      const value = () => (random(4) === 0 ? pick(names) : String(pick(numbers)).padStart(random(3), '0'));
      switch (random(7)) {
        case 0:
          return '*';
        case 1:
          return `*/${pick(numbers)}`;
        case 2:
          return `${value()}-${value()}`;
        case 3:
          return `${value()}-${value()}/${pick(numbers)}`;
        case 4:
          return `${value()}/${pick(numbers)}`;
        case 5:
          return pick(['?', 'L', '5#2', '15W', '', '-', '**']);
        default:
          return value();
      }
    };
    const field = (index: number) => Array.from({ length: 1 + random(3) }, () => atom(index)).join(',');
    let admittedCount = 0;
    for (let i = 0; i < 20_000; i++) {
      const schedule = CRON_FIELDS.map((_, index) => (random(2) === 0 ? '*' : field(index))).join(' ');
      const holds = CRON_FIELDS.every((f, index) => cronFieldHolds(f, index, schedule));
      if (!holds) continue;
      admittedCount++;
      assert.equal(cronerRefusal(schedule), undefined, `admitted ${JSON.stringify(schedule)}`);
      assert.ok(admitted(schedule), `${schedule}: the twin and the validator agree`);
    }
    assert.ok(admittedCount > 1000, `enough admitted schedules to mean something (${admittedCount})`);
  });
});

describe('backup time zones against Intl (what croner uses)', () => {
  it('admits every zone of the ICU database and croner runs each', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    assert.ok(zones.length > 300);
    for (const zone of zones) {
      assert.ok(isSchedulerTimeZone(zone), zone);
      assert.equal(cronerRefusal('0 3 * * *', zone), undefined, zone);
    }
  });

  it('croner runs every accepted zone of the table and refuses the unknown ones', () => {
    const cases = FIELD_CASES.find((c) => c.field === 'spec.backup.timezone');
    assert.ok(cases);
    for (const zone of cases.accept) assert.equal(cronerRefusal('0 3 * * *', zone), undefined, zone);
    for (const zone of ['Asia/Seul', 'Local', 'Factory', 'Mars/Olympus_Mons']) {
      assert.notEqual(cronerRefusal('0 3 * * *', zone), undefined, zone);
    }
  });
});

describe('default requests against the Pod rule requests <= limits', () => {
  it('lowers a default request to a smaller limit the user set, keeps it otherwise', () => {
    const small = resolveSampleDbSpec({
      version: '16',
      storage: { size: '1Gi' },
      resources: { limits: { cpu: '50m', memory: '128Mi' } },
    });
    assert.deepEqual(small.resources.requests, { cpu: '50m', memory: '128Mi' });
    const large = resolveSampleDbSpec({
      version: '16',
      storage: { size: '1Gi' },
      resources: { limits: { cpu: '2', memory: '4Gi' } },
    });
    assert.deepEqual(large.resources.requests, { cpu: '100m', memory: '256Mi' });
  });

  it('holds for every accepted value of the table', () => {
    for (const valid of VALID_CREATES) {
      const { requests, limits } = resolveSampleDbSpec(valid.spec as never).resources;
      for (const resource of ['cpu', 'memory'] as const) {
        const request = requests[resource];
        const limit = limits[resource];
        if (request === undefined || limit === undefined) continue;
        assert.ok(
          compareQuantities(request, limit) <= 0,
          `${valid.title}: ${resource} ${request} > ${limit}`,
        );
      }
    }
  });
});
