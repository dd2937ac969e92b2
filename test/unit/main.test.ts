import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingsFrom } from '../../src/main.ts';

describe('settingsFrom (main.ts environment)', () => {
  it('reads the Deployment environment', () => {
    assert.deepEqual(
      settingsFrom({
        WATCH_NAMESPACES: 'shop',
        LEADER_ELECTION: 'true',
        POD_NAME: 'op-1',
        POD_NAMESPACE: 'sampledb-system',
        LOG_LEVEL: 'debug',
        METRICS_PORT: '8080',
        HEALTH_PORT: '8081',
      }),
      {
        kubeconfigPath: undefined,
        namespaces: ['shop'],
        leaderElection: { namespace: 'sampledb-system', identity: 'op-1' },
        logLevel: 'debug',
        healthPort: 8081,
        metricsPort: 8080,
        postgresImageRepository: 'docker.io/library/postgres',
      },
    );
  });
  it('takes the PostgreSQL image repository from POSTGRES_IMAGE_REPOSITORY, refusing a tag or digest', () => {
    assert.equal(
      settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'registry.example.com:5000/mirror/postgres' })
        .postgresImageRepository,
      'registry.example.com:5000/mirror/postgres',
    );
    assert.throws(
      () => settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'postgres:16' }),
      /POSTGRES_IMAGE_REPOSITORY.*without a tag/,
    );
    assert.throws(() => settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'a/b@sha256:00' }), /without a digest/);
  });
  it('defaults to all namespaces and no leader election, and refuses what it cannot do', () => {
    const settings = settingsFrom({ KUBECONFIG: '/tmp/kc' });
    assert.deepEqual(settings.namespaces, []);
    assert.equal(settings.leaderElection, undefined);
    assert.deepEqual(settingsFrom({ WATCH_NAMESPACES: 'team-a, team-b,team-a' }).namespaces, [
      'team-a',
      'team-b',
    ]);
    assert.throws(() => settingsFrom({ WATCH_NAMESPACES: 'a,B_b' }), /not namespace names: B_b/);
    assert.throws(() => settingsFrom({ LEADER_ELECTION: 'true' }), /POD_NAMESPACE/);
    assert.throws(() => settingsFrom({ HEALTH_PORT: 'abc' }), /HEALTH_PORT/);
  });
});
