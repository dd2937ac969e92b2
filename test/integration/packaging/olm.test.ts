// bundle/ through operator-framework/api's own validators (test/controlplane/olm, built from its Go module): the
// bundle loads as OLM loads it, and no validator reports an error or a warning. A broken copy proves the validators
// are really looking.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { allCrds } from '../../../src/api/crd.ts';
import { BUNDLE_DIR } from '../../../src/packaging/olm/bundle.ts';
import { packagingTools, repoRoot, run } from '../support/packaging-tools.ts';

const { olmValidate } = packagingTools();
const bundle = join(repoRoot, BUNDLE_DIR);
const work = mkdtempSync(join(tmpdir(), 'olm-bundle-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Report {
  package: string;
  channels: string[];
  csv: string;
  crds: string[];
  objects: string[];
  validators: number;
  results: Array<{ errors: Array<{ error: string }>; warnings: Array<{ error: string }> }> | null;
  errors: number;
  warnings: number;
}

async function validate(dir: string, k8sVersion: string) {
  const result = await run(olmValidate, ['-strict', '-k8s-version', k8sVersion, dir]);
  return {
    code: result.code,
    stderr: result.stderr,
    report: result.stdout ? (JSON.parse(result.stdout) as Report) : undefined,
  };
}

describe('OLM bundle through operator-framework/api validators', { timeout: 60_000 }, () => {
  for (const k8sVersion of ['1.30', '1.36']) {
    it(`is valid with no warnings for Kubernetes ${k8sVersion}`, async () => {
      const { code, report, stderr } = await validate(bundle, k8sVersion);
      assert.equal(code, 0, `${stderr}${JSON.stringify(report?.results, null, 2)}`);
      assert.equal(report?.errors, 0);
      assert.equal(report?.warnings, 0);
      assert.equal(report?.package, 'sampledb-operator');
      assert.deepEqual(report?.channels, ['candidate']);
      assert.equal(report?.csv, 'sampledb-operator.v0.1.0');
      // Every CRD of the API is owned by the bundle (derived, so a new kind cannot be forgotten here).
      assert.deepEqual(
        report?.crds.sort(),
        allCrds()
          .map((crd) => crd.metadata.name)
          .sort(),
      );
      assert.ok(
        (report?.validators ?? 0) >= 9,
        'OLM defaults plus the OperatorHub and good-practice validators',
      );
    });
  }

  it('reports a broken bundle: an owned CRD missing, an unknown capability level', async () => {
    const broken = join(work, 'broken');
    cpSync(bundle, broken, { recursive: true });
    unlinkSync(join(broken, 'manifests/sampledbbackups.sampledb.io.crd.yaml'));
    const csvPath = join(broken, 'manifests/sampledb-operator.clusterserviceversion.yaml');
    writeFileSync(
      csvPath,
      readFileSync(csvPath, 'utf8').replace('capabilities: Basic Install', 'capabilities: Level Nine'),
    );
    const { code, report } = await validate(broken, '1.30');
    assert.equal(code, 1);
    const errors = (report?.results ?? []).flatMap((r) => r.errors.map((e) => e.error)).join('\n');
    assert.match(errors, /owned CRD .*SampleDBBackup.* not found/);
    assert.match(errors, /Level Nine/);
  });
});
