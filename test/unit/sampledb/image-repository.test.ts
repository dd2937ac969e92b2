import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageRepositoryProblem, type SampleDbBackupObject } from '../../../src/api/index.ts';
import { backupJob } from '../../../src/sampledb/backup-job.ts';
import { initJob } from '../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

const backup: SampleDbBackupObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBBackup',
  metadata: { name: 'nightly', namespace: 'shop', uid: 'u1' },
  spec: { sampleDB: { name: 'orders' } },
};

describe('the PostgreSQL image repository setting', () => {
  it('names the image of the database pod and of every Job, tagged with spec.version', () => {
    const db = sampleDb({ version: '15' });
    const defaults = { imageRepository: 'registry.example.com:5000/mirror/postgres' };
    const images = [
      statefulSet(resolveInstance(db, defaults)).spec?.template.spec?.containers[0]?.image,
      initJob(resolveInstance(db, defaults), undefined).spec?.template.spec?.containers[0]?.image,
      backupJob(resolveInstance(db, defaults), backup).spec?.template.spec?.containers[0]?.image,
    ];
    assert.deepEqual(images, Array(3).fill('registry.example.com:5000/mirror/postgres:15'));
    assert.equal(
      statefulSet(resolveInstance(db)).spec?.template.spec?.containers[0]?.image,
      'docker.io/library/postgres:15',
    );
  });

  it('never overrides spec.image', () => {
    const db = sampleDb({ version: '15', image: 'example.com/custom-pg@sha256:00' });
    const image = statefulSet(resolveInstance(db, { imageRepository: 'localhost/postgres' })).spec?.template
      .spec?.containers[0]?.image;
    assert.equal(image, 'example.com/custom-pg@sha256:00');
  });

  it('accepts repositories with a registry and port, refuses tags, digests and upper case', () => {
    for (const ok of [
      'postgres',
      'docker.io/library/postgres',
      'localhost/postgres',
      'reg.example.com:5000/a/b',
    ])
      assert.equal(imageRepositoryProblem(ok), undefined, ok);
    assert.match(imageRepositoryProblem('postgres:16') ?? '', /without a tag/);
    assert.match(imageRepositoryProblem('postgres@sha256:00') ?? '', /without a digest/);
    assert.match(imageRepositoryProblem('Registry/Postgres') ?? '', /not an image repository/);
    assert.match(imageRepositoryProblem('a//b') ?? '', /not an image repository/);
  });
});
