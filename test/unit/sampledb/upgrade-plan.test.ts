import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type JobState,
  planUpgrade,
  START_TIMEOUT_MS,
  type UpgradeObservation,
  type UpgradePlan,
} from '../../../src/sampledb/upgrade/plan.ts';

const OLD = 'localhost/postgres:15';
const NEW = 'localhost/postgres:17';
type JobName = 'preflight' | 'upgrade' | 'verify' | 'rollback' | 'cleanup';

/**
 * A small world the plan acts on: Jobs finish one tick after they are created (or fail, when told to), the
 * StatefulSet follows the directive, its pod goes away one tick after replicas 0 and is ready one tick after it
 * runs the right image. The files' major follows the upgrade and rollback Jobs, as the scripts do.
 */
class World {
  obs: UpgradeObservation;
  files = 15;
  oldFilesKept = true;
  readonly fail: ReadonlySet<JobName | 'backup' | 'new-server'>;
  readonly actions: string[] = [];
  constructor(fail: Iterable<JobName | 'backup' | 'new-server'> = [], window = { open: true }) {
    this.fail = new Set(fail);
    this.obs = {
      fromMajor: 15,
      toMajor: 17,
      oldImage: OLD,
      newImage: NEW,
      window,
      statefulSet: { replicas: 1, image: OLD, podExists: true, podReady: true, podImage: OLD },
      now: new Date('2026-12-03T18:00:00Z'),
    };
  }

  #finish(name: JobName, job: JobState | undefined): JobState | undefined {
    if (job?.state !== 'running') return job;
    // What the Job carries (the rollback's cause annotation) stays with it.
    if (this.fail.has(name)) return { ...job, state: 'failed', message: `${name} broke` };
    if (name === 'upgrade') this.files = 17;
    if (name === 'rollback') this.files = 15;
    if (name === 'cleanup') this.oldFilesKept = false;
    return { ...job, state: 'succeeded', completedAt: this.obs.now.toISOString() };
  }

  /** One reconcile: plan, act, then let the cluster move. */
  tick(): UpgradePlan {
    const plan = planUpgrade(this.obs, 'orders');
    const o = this.obs;
    const next = plan.next;
    this.actions.push(next.kind);
    if (next.kind === 'create-backup') o.backup = { name: next.name, phase: 'Running' };
    if (next.kind === 'create-preflight') o.preflight = { state: 'running' };
    if (next.kind === 'create-upgrade') o.upgrade = { state: 'running' };
    if (next.kind === 'create-verify') o.verify = { state: 'running' };
    if (next.kind === 'create-rollback') o.rollback = { state: 'running', cause: next.cause };
    if (next.kind === 'create-cleanup') o.cleanup = { state: 'running' };
    // The cluster moves.
    const sts = o.statefulSet;
    const before = { ...sts };
    sts.replicas = plan.workload.replicas;
    sts.image = plan.workload.image;
    if (before.replicas === 0 || before.image !== sts.image) {
      // The pod goes first; a new one comes with the template.
      sts.podExists = false;
      sts.podReady = false;
      delete sts.podImage;
    }
    if (sts.replicas === 1 && before.replicas === sts.replicas && before.image === sts.image) {
      sts.podExists = true;
      sts.podImage = sts.image;
      // A server only runs files of its own major; a failing new server never becomes ready.
      const major = sts.image === NEW ? 17 : 15;
      sts.podReady = major === this.files && !(major === 17 && this.fail.has('new-server'));
    }
    if (o.backup?.phase === 'Running' && next.kind !== 'create-backup') {
      o.backup = this.fail.has('backup')
        ? { ...o.backup, phase: 'Failed', message: 'pg_dump broke' }
        : { ...o.backup, phase: 'Completed' };
    }
    for (const name of ['preflight', 'upgrade', 'rollback', 'cleanup'] as const) {
      if (!next.kind.endsWith(name)) o[name] = this.#finish(name, o[name]) as never;
    }
    if (o.verify?.state === 'running' && next.kind !== 'create-verify') {
      o.verify = this.fail.has('verify')
        ? { state: 'failed', message: 'the owner app cannot log in' }
        : { state: 'succeeded', version: '17.2' };
    }
    o.now = new Date(o.now.getTime() + 60_000);
    return plan;
  }

  run(limit = 60): UpgradePlan {
    let plan = this.tick();
    for (let i = 0; i < limit && plan.next.kind !== 'none'; i++) plan = this.tick();
    return plan;
  }
}

describe('planUpgrade', () => {
  it('goes backup → stop → preflight → upgrade → start new → verify → cleanup → done', () => {
    const world = new World();
    const plan = world.run();
    assert.equal(plan.step, 'Done');
    assert.deepEqual(plan.workload, { image: NEW, replicas: 1, dataMajor: 17 });
    assert.equal(plan.backup, 'orders-pre-upgrade-17');
    assert.deepEqual(
      world.actions.filter((a) => a.startsWith('create-')),
      ['create-backup', 'create-preflight', 'create-upgrade', 'create-verify', 'create-cleanup'],
    );
    assert.equal(world.files, 17);
    assert.equal(world.oldFilesKept, false);
  });

  it('never runs a Job on the data files while a server has them, nor a server on files of another major', () => {
    for (const fail of [[], ['preflight'], ['upgrade'], ['verify'], ['new-server']] as const) {
      const world = new World(fail);
      for (let i = 0; i < 60; i++) {
        const { podExists } = world.obs.statefulSet;
        const plan = world.tick();
        if (['create-preflight', 'create-upgrade', 'create-rollback'].includes(plan.next.kind)) {
          assert.equal(podExists, false, `${fail.join()}: ${plan.next.kind} with a pod running`);
          assert.equal(plan.workload.replicas, 0);
        }
        if (plan.next.kind === 'none') break;
      }
    }
  });

  for (const [fault, cause, rolledBack] of [
    ['backup', /pre-upgrade backup orders-pre-upgrade-17 failed: pg_dump broke/, false],
    ['preflight', /preflight failed: preflight broke/, false],
    ['upgrade', /upgrade Job failed: upgrade broke/, true],
    ['verify', /verification failed: the owner app cannot log in/, true],
    ['new-server', /did not become ready within 15 minutes/, true],
  ] as const) {
    it(`returns to 15 and its files when the ${fault} fails, naming the cause and the backup`, () => {
      const world = new World([fault]);
      const plan = world.run();
      assert.equal(plan.step, 'Failed');
      assert.match(plan.failure ?? '', cause);
      assert.deepEqual(plan.workload, { image: OLD, replicas: 1, dataMajor: 15 });
      assert.equal(plan.backup, 'orders-pre-upgrade-17');
      assert.equal(world.files, 15);
      assert.equal(world.oldFilesKept, true, 'the old files are never removed before verification');
      assert.equal(world.actions.includes('create-rollback'), rolledBack);
      assert.equal(world.actions.includes('create-cleanup'), false);
      // Once failed, nothing more happens: the next reconcile plans the same.
      assert.deepEqual(world.tick(), plan);
      assert.equal(world.obs.statefulSet.podReady, true, 'the old server is back');
    });
  }

  it('resumes from any point: a fresh plan from the observation alone reaches the same end', () => {
    // The operator keeps no memory between reconciles; killing it between any two ticks is replaying the plan from
    // the observation, which is all the plan ever reads. So every prefix of a run, continued, ends the same.
    const full = new World().run();
    for (let cut = 1; cut < 12; cut++) {
      const world = new World();
      for (let i = 0; i < cut; i++) world.tick();
      const resumed = new World();
      resumed.obs = structuredClone(world.obs);
      resumed.files = world.files;
      resumed.oldFilesKept = world.oldFilesKept;
      assert.deepEqual(resumed.run().workload, full.workload, `cut after ${cut}`);
    }
  });

  it('waits for the maintenance window before it starts, and says until when', () => {
    const world = new World([], { open: false, opensAt: '2026-12-06T02:00:00Z' } as never);
    const plan = world.tick();
    assert.equal(plan.step, 'WaitingForWindow');
    assert.match(JSON.stringify(plan.next), /2026-12-06T02:00:00Z/);
    assert.deepEqual(plan.workload, { image: OLD, replicas: 1, dataMajor: 15 });
  });

  it('keeps a started upgrade going when the window closes', () => {
    const world = new World();
    world.tick();
    world.obs.window = { open: false };
    assert.equal(world.run().step, 'Done');
  });

  it('leaves the database stopped and says so when the rollback itself fails', () => {
    const world = new World(['upgrade', 'rollback']);
    const plan = world.run();
    assert.equal(plan.step, 'Failed');
    assert.equal(plan.workload.replicas, 0);
    assert.match(plan.failure ?? '', /then the rollback failed: rollback broke/);
  });

  it('times the new server from the upgrade Job completion', () => {
    const obs: UpgradeObservation = {
      ...new World().obs,
      backup: { name: 'orders-pre-upgrade-17', phase: 'Completed' },
      preflight: { state: 'succeeded' },
      upgrade: { state: 'succeeded', completedAt: '2026-12-03T18:00:00Z' },
      statefulSet: { replicas: 1, image: NEW, podExists: true, podReady: false, podImage: NEW },
      now: new Date(Date.parse('2026-12-03T18:00:00Z') + START_TIMEOUT_MS - 1),
    };
    assert.equal(planUpgrade(obs, 'orders').step, 'Starting');
    assert.equal(planUpgrade({ ...obs, now: new Date(obs.now.getTime() + 2) }, 'orders').step, 'RollingBack');
  });

  it('records the target major on the StatefulSet from the stop until Done or the rollback, before any Job writes', () => {
    for (const fail of [[], ['upgrade'], ['verify'], ['upgrade', 'rollback']] as const) {
      const world = new World(fail);
      let recorded = false;
      for (let i = 0; i < 60; i++) {
        const filesBefore = world.files;
        const plan = world.tick();
        if (
          plan.next.kind === 'create-upgrade' ||
          plan.next.kind === 'create-rollback' ||
          filesBefore === 17
        ) {
          // The files are (or are about to be) converted: whatever the spec says, this upgrade is followed.
          if (!(plan.step === 'Done' || (plan.step === 'Failed' && plan.workload.replicas === 1))) {
            assert.equal(plan.workload.upgradingTo, 17, `${fail.join()}: ${plan.step} without the record`);
          }
        }
        if (plan.workload.upgradingTo !== undefined) recorded = true;
        if (plan.next.kind === 'none') {
          const settledSafely = plan.step === 'Done' || plan.workload.replicas === 1;
          assert.equal(
            plan.workload.upgradingTo,
            settledSafely ? undefined : 17,
            `${fail.join()}: ${plan.step}`,
          );
          break;
        }
      }
      assert.ok(recorded, fail.join());
    }
    // Before the files go offline nothing records an upgrade: setting the spec back then simply abandons it.
    const waiting = planUpgrade(new World().obs, 'orders');
    assert.equal(waiting.step, 'Backup');
    assert.equal(waiting.workload.upgradingTo, undefined);
  });

  it('abandoned during the preflight: the files stay offline while it reads, then the old server starts', () => {
    const down = { replicas: 0, image: OLD, podExists: false, podReady: false };
    const obs = (patch: Partial<UpgradeObservation>): UpgradeObservation => ({
      ...new World().obs,
      backup: { name: 'orders-pre-upgrade-17', phase: 'Completed' },
      statefulSet: down,
      ...patch,
    });
    const reading = planUpgrade(
      obs({ preflight: { state: 'running' }, abandoned: { preflightReading: true } }),
      'orders',
    );
    assert.equal(reading.step, 'Preflight');
    assert.deepEqual(reading.workload, { image: OLD, replicas: 0, dataMajor: 15, upgradingTo: 17 });
    assert.equal(reading.next.kind, 'wait');
    // A finished preflight is not read any more, succeeded or not: the old server starts, no upgrade Job.
    for (const preflight of [{ state: 'succeeded' }, { state: 'failed', message: 'x' }] as const) {
      const gone = planUpgrade(obs({ preflight, abandoned: { preflightReading: false } }), 'orders');
      assert.deepEqual(gone.workload, { image: OLD, replicas: 1, dataMajor: 15 });
      assert.equal(gone.next.kind, 'none');
    }
    // Asked for again after the old server started: pg_upgrade waits until it is stopped.
    const again = planUpgrade(
      obs({
        preflight: { state: 'succeeded' },
        statefulSet: { replicas: 1, image: OLD, podExists: true, podReady: true, podImage: OLD },
      }),
      'orders',
    );
    assert.equal(again.step, 'Stopping');
    assert.equal(again.workload.replicas, 0);
    assert.equal(again.next.kind, 'wait');
  });
});

describe('planUpgrade with replicas', () => {
  /** Three instances, the primary elected on `primaryOrdinal`; a switchover asked for completes one tick later. */
  function replicated(primaryOrdinal: number | undefined, fail: Iterable<JobName> = []) {
    const world = new World(fail);
    world.obs.upReplicas = 3;
    world.obs.statefulSet.replicas = 3;
    world.obs.replication = primaryOrdinal === undefined ? {} : { primaryOrdinal };
    const step = (): UpgradePlan => {
      const plan = world.tick();
      const replication = world.obs.replication ?? {};
      if (plan.next.kind === 'request-switchover') {
        assert.equal(plan.next.target, 'orders-0');
        world.obs.replication = { ...replication, switchoverTo: plan.next.target };
      } else if (replication.switchoverTo === 'orders-0') {
        world.obs.replication = { primaryOrdinal: 0 };
      }
      return plan;
    };
    return { world, step };
  }

  it('hands the primary to pod 0 before the files go offline, runs pod 0 alone, then all replicas on the new major', () => {
    const { world, step } = replicated(2);
    const steps: string[] = [];
    let plan = step();
    for (let i = 0; i < 60 && plan.next.kind !== 'none'; i++) {
      steps.push(plan.step);
      // Offline (0) or the new server alone (1) only with the primary on pod 0.
      if (plan.workload.replicas < 3) assert.equal(world.obs.replication?.primaryOrdinal, 0, plan.step);
      plan = step();
    }
    assert.equal(plan.step, 'Done');
    assert.deepEqual(plan.workload, { image: NEW, replicas: 3, dataMajor: 17 });
    assert.ok(steps.includes('Switchover'), `${steps}`);
    assert.equal(world.actions.filter((a) => a === 'request-switchover').length, 1);
    // The backup is taken before the switchover: the files are online either way.
    assert.ok(world.actions.indexOf('create-backup') < world.actions.indexOf('request-switchover'));
  });

  it('with the primary on pod 0 already: no switchover', () => {
    const { world, step } = replicated(0);
    let plan = step();
    for (let i = 0; i < 60 && plan.next.kind !== 'none'; i++) plan = step();
    assert.equal(plan.step, 'Done');
    assert.ok(!world.actions.includes('request-switchover'));
  });

  it('a failure anywhere returns all replicas to the old major and files', () => {
    for (const fail of [['preflight'], ['upgrade'], ['verify']] as const) {
      const { world, step } = replicated(0, fail);
      let plan = step();
      for (let i = 0; i < 60 && plan.next.kind !== 'none'; i++) plan = step();
      assert.equal(plan.step, 'Failed', `${fail}`);
      assert.deepEqual(plan.workload, { image: OLD, replicas: 3, dataMajor: 15 }, `${fail}`);
      assert.equal(world.files, 15);
    }
  });

  it("waits for a user's switchover to another pod, and for an election, without stopping anything", () => {
    const { world } = replicated(1);
    world.obs.backup = { name: 'orders-pre-upgrade-17', phase: 'Completed' };
    world.obs.replication = { primaryOrdinal: 1, switchoverTo: 'orders-2' };
    let plan = planUpgrade(world.obs, 'orders');
    assert.equal(plan.step, 'Switchover');
    assert.equal(plan.next.kind, 'wait');
    assert.match(plan.next.kind === 'wait' ? plan.next.why : '', /switchover to orders-2 is asked for/);
    assert.equal(plan.workload.replicas, 3);
    assert.equal(plan.workload.upgradingTo, undefined);
    world.obs.replication = {};
    plan = planUpgrade(world.obs, 'orders');
    assert.equal(plan.step, 'Switchover');
    assert.equal(plan.next.kind, 'wait');
    assert.equal(plan.workload.replicas, 3);
  });
});
