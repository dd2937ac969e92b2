import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { allCrds } from '../../../src/api/crd.ts';
import { stackProgram } from '../../../src/deploy/program.ts';
import * as stackEntry from '../../../src/deploy/stack.ts';
import {
  configOf,
  FAKE_DIGEST,
  type RecordedResource,
  resolveDeep,
  runWithMocks,
  secretPaths,
} from './pulumi-mocks.ts';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const PREBUILT = `registry.example.com/platform/sampledb-operator@sha256:${'12'.repeat(32)}`;
const SECRET_KEY = 'sampledb-operator:registryPassword';
const PASSWORD = 'p4ssw0rd-that-must-not-leak';

interface Container {
  image: string;
  env: { name: string; value?: string }[];
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface DeploymentInputs {
  spec: { replicas: number; template: { spec: { containers: Container[] } } };
  metadata: { namespace: string };
}

/** A stack file's config, as the CLI hands it to the program. */
function stackFileConfig(stack: string): Record<string, string> {
  const file = parse(readFileSync(join(repoRoot, `Pulumi.${stack}.yaml`), 'utf8')) as {
    config: Record<string, unknown>;
  };
  return configOf(file.config);
}

function byType(resources: readonly RecordedResource[], suffix: string): RecordedResource[] {
  return resources.filter((r) => r.type.endsWith(suffix));
}

function deploymentOf(resources: readonly RecordedResource[]): DeploymentInputs {
  const [deployment, ...others] = byType(resources, ':Deployment');
  assert.ok(deployment, 'a Deployment');
  assert.equal(others.length, 0);
  return deployment.inputs as unknown as DeploymentInputs;
}

function controllerOf(resources: readonly RecordedResource[]): Container {
  const container = deploymentOf(resources).spec.template.spec.containers[0];
  assert.ok(container);
  return container;
}

function envOf(container: Container, name: string): string | undefined {
  return container.env.find((e) => e.name === name)?.value;
}

describe('stack program: image build on', () => {
  const config = configOf({
    image: { registry: 'ghcr.io/acme', platforms: ['linux/amd64', 'linux/arm64'] },
    registryUsername: 'robot',
    registryPassword: PASSWORD,
  });

  test('builds from this repository and pins the Deployment to the pushed digest', async () => {
    const { resources, result } = await runWithMocks(config, stackProgram, { secretKeys: [SECRET_KEY] });
    const [image, ...more] = byType(resources, 'docker-build:index:Image');
    assert.ok(image);
    assert.equal(more.length, 0);
    const args = image.inputs as Record<string, unknown>;
    assert.deepEqual(args.platforms, ['linux/amd64', 'linux/arm64']);
    assert.equal(args.push, true);
    assert.deepEqual(args.tags, ['ghcr.io/acme/sampledb-operator:0.1.0']);
    assert.deepEqual(args.cacheFrom, [{ registry: { ref: 'ghcr.io/acme/sampledb-operator:buildcache' } }]);
    assert.equal(
      (args.context as { location: string }).location.replace(/\/$/, ''),
      repoRoot.replace(/\/$/, ''),
    );
    assert.ok(
      existsSync((args.dockerfile as { location: string }).location),
      'the Dockerfile the build uses exists',
    );

    const pinned = `ghcr.io/acme/sampledb-operator@${FAKE_DIGEST}`;
    assert.equal(controllerOf(resources).image, pinned);
    const deployment = byType(resources, ':Deployment')[0];
    assert.ok(deployment?.dependsOn.includes('controller-image'), 'the Deployment waits for the build');
    const outputs = (await resolveDeep(result)) as Record<string, unknown>;
    assert.equal(outputs.image, pinned);
    assert.equal(outputs.imageDigest, FAKE_DIGEST);
    assert.equal(outputs.imageBuilt, true);
  });

  test('no secret in the outputs, and the registry password reaches the build only as a secret', async () => {
    const { resources, result } = await runWithMocks(config, stackProgram, { secretKeys: [SECRET_KEY] });
    assert.deepEqual(await secretPaths(result), [], 'no output is a secret');
    assert.ok(!JSON.stringify(await resolveDeep(result)).includes(PASSWORD), 'the password is in no output');
    const image = byType(resources, 'docker-build:index:Image')[0];
    assert.ok(image);
    // Mocks receive secrets in their wire form: a value wrapped with the secret signature.
    const registries = (image.inputs as { registries: Record<string, unknown> }).registries;
    assert.equal(registries['4dabf18193072939515e22adb298388d'], '1b47061264138c4ac30d75fd1eb44270');
    assert.deepEqual(registries.value, [{ address: 'ghcr.io', username: 'robot', password: PASSWORD }]);
    for (const r of resources.filter((r) => r !== image)) {
      assert.ok(!JSON.stringify(r.inputs).includes(PASSWORD), `${r.name} does not carry the password`);
    }
  });
});

describe('stack program: image.build false', () => {
  test('takes the prebuilt digest reference and builds nothing', async () => {
    const { resources, result } = await runWithMocks(
      configOf({ image: { build: false, ref: PREBUILT } }),
      stackProgram,
    );
    assert.equal(byType(resources, 'docker-build:index:Image').length, 0);
    assert.equal(controllerOf(resources).image, PREBUILT);
    const outputs = (await resolveDeep(result)) as Record<string, unknown>;
    assert.equal(outputs.imageDigest, `sha256:${'12'.repeat(32)}`);
    assert.equal(outputs.imageBuilt, false);
  });

  test('a tag instead of a digest fails before anything is registered', async () => {
    await assert.rejects(
      runWithMocks(
        configOf({ image: { build: false, ref: 'registry.example.com/op:latest' } }),
        stackProgram,
      ),
      /image\.ref: must be pinned by digest/,
    );
  });
});

describe('stack program: ordering', () => {
  test('CRDs (and created namespaces) come before every other object; SampleDBs after the operator', async () => {
    const { resources } = await runWithMocks(stackFileConfig('dev'), stackProgram);
    const crds = byType(resources, ':CustomResourceDefinition').map((r) => r.name);
    assert.equal(crds.length, allCrds().length);
    const kubeObjects = resources.filter((r) => r.type.startsWith('kubernetes:') && !crds.includes(r.name));
    const createdNamespaces = kubeObjects.filter((r) => r.name.startsWith('namespaces/')).map((r) => r.name);
    assert.deepEqual(createdNamespaces, ['namespaces/Namespace/dev-apps']);
    for (const r of kubeObjects.filter((r) => !createdNamespaces.includes(r.name))) {
      for (const crd of crds) assert.ok(r.dependsOn.includes(crd), `${r.name} depends on ${crd}`);
      for (const ns of createdNamespaces) assert.ok(r.dependsOn.includes(ns), `${r.name} depends on ${ns}`);
    }
    const sampleDbs = byType(resources, 'sampledb.io/v1alpha1:SampleDB');
    assert.equal(sampleDbs.length, 1);
    const deployment = byType(resources, ':Deployment')[0]?.name ?? '';
    assert.ok(
      sampleDbs[0]?.dependsOn.includes(deployment),
      'the SampleDB waits for the controller Deployment',
    );
    const serviceAccount = byType(resources, ':ServiceAccount')[0]?.name ?? '';
    assert.ok(byType(resources, ':Deployment')[0]?.dependsOn.includes(serviceAccount));
  });
});

describe('stack program: dev and prod stack files', () => {
  test('differ where they should', async () => {
    const dev = await runWithMocks(stackFileConfig('dev'), stackProgram, { stack: 'dev' });
    const prod = await runWithMocks(stackFileConfig('prod'), stackProgram, { stack: 'prod' });
    const devOut = (await resolveDeep(dev.result)) as Record<string, unknown>;
    const prodOut = (await resolveDeep(prod.result)) as Record<string, unknown>;

    assert.equal(devOut.namespace, 'sampledb-dev');
    assert.equal(prodOut.namespace, 'sampledb-system');
    assert.equal(deploymentOf(dev.resources).metadata.namespace, 'sampledb-dev');

    // dev builds its image, prod deploys the digest CI published.
    assert.equal(byType(dev.resources, 'docker-build:index:Image').length, 1);
    assert.equal(byType(prod.resources, 'docker-build:index:Image').length, 0);
    assert.equal(devOut.imageBuilt, true);
    assert.match(
      controllerOf(dev.resources).image,
      /^registry\.dev\.example\.com\/platform\/sampledb-operator@sha256:/,
    );
    assert.match(
      controllerOf(prod.resources).image,
      /^registry\.example\.com\/platform\/sampledb-operator@sha256:/,
    );

    assert.equal(deploymentOf(dev.resources).spec.replicas, 1);
    assert.equal(deploymentOf(prod.resources).spec.replicas, 2);
    assert.equal(envOf(controllerOf(dev.resources), 'LOG_LEVEL'), 'debug');
    assert.equal(envOf(controllerOf(prod.resources), 'LOG_LEVEL'), 'info');
    assert.equal(envOf(controllerOf(dev.resources), 'WATCH_NAMESPACES'), '');
    assert.equal(envOf(controllerOf(prod.resources), 'WATCH_NAMESPACES'), 'shop');
    assert.equal(controllerOf(dev.resources).resources.limits?.memory, '256Mi');
    assert.equal(controllerOf(prod.resources).resources.limits?.memory, '1Gi');

    // All namespaces: one ClusterRole with the SampleDB rules. One namespace: a Role there.
    assert.equal(byType(dev.resources, ':Role').length, 1, 'dev: only the leader-election Role');
    assert.deepEqual(
      byType(prod.resources, ':Role')
        .map((r) => (r.inputs.metadata as { namespace: string }).namespace)
        .sort(),
      ['sampledb-system', 'shop'],
    );

    assert.deepEqual(Object.keys(devOut.instances as object), ['dev-apps/scratch']);
    assert.deepEqual(Object.keys(prodOut.instances as object).sort(), ['shop/invoices', 'shop/orders']);
    assert.deepEqual((prodOut.instances as Record<string, unknown>)['shop/orders'], {
      namespace: 'shop',
      name: 'orders',
      host: 'orders.shop.svc',
      port: 5432,
      bindingSecretName: 'orders-binding',
    });

    // prod keeps its CRDs (and so every SampleDB) when the stack is destroyed; dev does not.
    assert.ok(byType(prod.resources, ':CustomResourceDefinition').every((r) => r.retainOnDelete));
    assert.ok(byType(dev.resources, ':CustomResourceDefinition').every((r) => !r.retainOnDelete));
    // prod's application namespace belongs to its team; dev creates its own.
    assert.equal(prod.resources.filter((r) => r.name.startsWith('namespaces/')).length, 0);
    assert.equal(dev.resources.filter((r) => r.name.startsWith('namespaces/')).length, 1);
  });
});

describe("Pulumi.yaml's main", () => {
  test('points at a module whose only export is the program, as the nodejs runtime requires', () => {
    const project = parse(readFileSync(join(repoRoot, 'Pulumi.yaml'), 'utf8')) as {
      main: string;
      runtime: { name: string; options: { typescript: boolean } };
    };
    assert.equal(project.runtime.name, 'nodejs');
    assert.equal(project.runtime.options.typescript, false, 'Node 24 strips the types; no ts-node');
    assert.equal(project.main, 'src/deploy/stack.ts');
    // @pulumi/pulumi's run script refuses a module with both a default and named exports, and calls a function.
    assert.deepEqual(Object.keys(stackEntry), ['default']);
    assert.equal(stackEntry.default, stackProgram);
  });
});
