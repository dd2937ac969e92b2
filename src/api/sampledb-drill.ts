// The SampleDBDrill API: a resilience drill against one SampleDB, once or on a cron schedule. The operator injects
// the fault (or refuses, with the guard rail that stopped it), watches the database recover and records what a user
// wants to know about each run: how long until the operator saw the fault, how long until writes were accepted
// again, whether a row written before the fault survived, and whether the replicas caught up.
import { type Static, Type } from '@sinclair/typebox';
import { CronSchedule } from './cron-schema.ts';
import type { API_VERSION, KINDS } from './identity.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { ConditionList, ObjectName, StringEnum, withRules } from './schema-kit.ts';

/**
 * The faults a drill can inject. `fill-disk` and `isolate-primary` are accepted by the schema on every cluster; one
 * that cannot run them safely says why in the status (a refusal), rather than the API pretending they do not exist.
 */
export const DRILL_KINDS = [
  'kill-primary',
  'kill-replica',
  'kill-operator-leader',
  'restore-check',
  'fill-disk',
  'isolate-primary',
] as const;
export type DrillKind = (typeof DRILL_KINDS)[number];

/** Once: Pending → Running → Succeeded, Failed or Refused. On a schedule: Scheduled between runs. */
export const DRILL_PHASES = ['Pending', 'Scheduled', 'Running', 'Succeeded', 'Failed', 'Refused'] as const;
export type DrillPhase = (typeof DRILL_PHASES)[number];
export const DRILL_RUN_RESULTS = ['Succeeded', 'Failed', 'Refused'] as const;
export type DrillRunResult = (typeof DRILL_RUN_RESULTS)[number];

/**
 * The steps of one run, in order (restore-check: canary is skipped, restore replaces inject and recover;
 * isolate-primary checks NetworkPolicy enforcement, netcheck, before it injects).
 */
export const DRILL_STEPS = ['canary', 'netcheck', 'inject', 'recover', 'restore', 'cleanup'] as const;
export type DrillStep = (typeof DRILL_STEPS)[number];

export const DEFAULT_DRILL_HISTORY_LIMIT = 5;
export const MAX_DRILL_HISTORY_LIMIT = 20;

export const SampleDbDrillSpecSchema = withRules(
  Type.Object(
    {
      sampleDB: Type.Object(
        { name: ObjectName({ description: 'The SampleDB in the same namespace to drill.' }) },
        { description: 'The database the drill runs against. Immutable.' },
      ),
      kind: StringEnum(DRILL_KINDS, {
        description:
          'The fault. kill-primary: delete the primary pod (instances >= 2). kill-replica: delete a replica pod ' +
          '(instances >= 2). kill-operator-leader: delete the operator pod holding the leader Lease (leader ' +
          'election on). restore-check: restore the latest Completed backup into a throw-away SampleDB, check it ' +
          "became Ready, delete it. fill-disk: a Job on the primary's node fills its data volume with one ballast file " +
          "(instances >= 2), holds it 30 s and removes it; refused (FillDiskUnsafe) when the volume's file system is " +
          'larger than twice its claim plus 512 MiB (shared with the node). isolate-primary: a NetworkPolicy ' +
          'that denies all traffic to and from the primary pod (instances >= 2), lifted once the operator elected ' +
          'another primary or failoverDelaySeconds + 60 s passed; first a pod under a deny-all egress policy must ' +
          'fail to reach the primary, otherwise the run is refused (NetworkPolicyNotEnforced): the network does not ' +
          'enforce NetworkPolicy. Connections open before the isolation are not cut (as with most CNIs). Immutable.',
      }),
      schedule: Type.Optional(
        CronSchedule(
          'Cron schedule (UTC) of the drill',
          'e.g. "0 4 * * 1". Default: run once, when the SampleDBDrill is created.',
        ),
      ),
      historyLimit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_DRILL_HISTORY_LIMIT,
          default: DEFAULT_DRILL_HISTORY_LIMIT,
          description: `How many runs status.runs keeps, newest first. Default: ${DEFAULT_DRILL_HISTORY_LIMIT}.`,
        }),
      ),
    },
    { description: 'What to drill and when.' },
  ),
  [
    {
      rule: 'self.sampleDB == oldSelf.sampleDB && self.kind == oldSelf.kind',
      message:
        'spec.sampleDB and spec.kind are immutable: create a new SampleDBDrill for another database or fault',
      holdsOnUpdate: (
        self: { sampleDB: unknown; kind: unknown },
        old: { sampleDB: unknown; kind: unknown },
      ) => JSON.stringify(self.sampleDB) === JSON.stringify(old.sampleDB) && self.kind === old.kind,
    },
  ],
);

const seconds = (description: string) => Type.Optional(Type.Number({ minimum: 0, description }));
const time = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

export const DrillRunSchema = Type.Object(
  {
    run: Type.Integer({ minimum: 1, description: 'The run number (1, 2, ...).' }),
    result: StringEnum(DRILL_RUN_RESULTS, { description: 'Succeeded, Failed, or Refused by a guard rail.' }),
    reason: Type.String({
      maxLength: 128,
      description: 'Why, in CamelCase (a refusal names its guard rail).',
    }),
    message: Type.String({ maxLength: 2048, description: 'What happened, for people.' }),
    startedAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.String({ format: 'date-time' }),
    target: Type.Optional(Type.String({ description: 'The pod the fault hit, or the throw-away SampleDB.' })),
    detectSeconds: seconds('From the fault to the operator seeing it (SampleDB status or a new leader).'),
    writableSeconds: seconds(
      "From the fault (fill-disk: the ballast's removal) to the first write accepted through the client Service " +
        '(0: no write failed).',
    ),
    failedWrites: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Writes refused while the probe waited.' }),
    ),
    canaryPresent: Type.Optional(
      Type.Boolean({ description: 'The row written before the fault was there afterwards.' }),
    ),
    replicationCaughtUp: Type.Optional(
      Type.Boolean({ description: 'Every replica streamed and replayed the probe write.' }),
    ),
    replicationSeconds: seconds('From the first accepted write to every replica having replayed it.'),
    restoreSeconds: seconds('restore-check: from creating the throw-away SampleDB to it being Ready.'),
    isolatedSeconds: seconds(
      "isolate-primary: from the isolation's NetworkPolicy being created to its deletion.",
    ),
    filledBytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        format: 'int64',
        description: 'fill-disk: the size of the ballast file that filled the data volume.',
      }),
    ),
  },
  { description: 'One finished run and its measurements.' },
);
export type DrillRun = Static<typeof DrillRunSchema>;

export const DrillCurrentRunSchema = Type.Object(
  {
    run: Type.Integer({ minimum: 1 }),
    step: StringEnum(DRILL_STEPS, { description: 'The step running now.' }),
    startedAt: Type.String({ format: 'date-time' }),
    slot: time('The schedule slot this run is for.'),
    target: Type.Optional(Type.String({ description: 'The pod (or operator identity) the fault is for.' })),
    targetUid: Type.Optional(
      Type.String({ description: 'Its uid, so a re-created pod of that name is not it.' }),
    ),
    injectedAt: time('When the fault was injected (recorded before the deletion is sent).'),
    detectedAt: time('When the operator first saw the fault.'),
    liftedAt: time("isolate-primary: when the isolation's NetworkPolicy was deleted."),
    restoreStartedAt: time('restore-check: when the throw-away SampleDB was created.'),
    restoreReadyAt: time('restore-check: when it was Ready.'),
  },
  { description: 'The run in progress: what a restarted operator resumes from.' },
);
export type DrillCurrentRun = Static<typeof DrillCurrentRunSchema>;

export const SampleDbDrillStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(DRILL_PHASES, {
        description: 'Pending, Scheduled (waiting for the next slot), Running, Succeeded, Failed or Refused.',
      }),
    ),
    message: Type.Optional(Type.String({ description: 'The last result, or what the run waits for.' })),
    current: Type.Optional(DrillCurrentRunSchema),
    runs: Type.Optional(
      Type.Array(DrillRunSchema, {
        maxItems: MAX_DRILL_HISTORY_LIMIT,
        description: 'The last spec.historyLimit runs, newest first.',
      }),
    ),
    runCount: Type.Optional(Type.Integer({ minimum: 0, description: 'Runs started (or refused) so far.' })),
    lastSlot: time('The newest schedule slot a run was started (or refused) for.'),
    nextRunAt: time('The next schedule slot.'),
    conditions: Type.Optional(ConditionList('LastRunSucceeded with reason and message.')),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  },
  { description: 'Observed state of the drill. Written only by the operator.' },
);

export type SampleDbDrillSpec = Static<typeof SampleDbDrillSpecSchema>;
export type SampleDbDrillStatus = Static<typeof SampleDbDrillStatusSchema>;

export interface SampleDbDrillObject extends KubeObject {
  apiVersion: typeof API_VERSION;
  kind: typeof KINDS.sampleDbDrill;
  spec: SampleDbDrillSpec;
  status?: SampleDbDrillStatus;
}

export const SampleDbDrillSchema = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'sampledb.io/v1alpha1' })),
  kind: Type.Optional(Type.String({ description: 'SampleDBDrill' })),
  metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
  spec: SampleDbDrillSpecSchema,
  status: Type.Optional(SampleDbDrillStatusSchema),
});
