// The package as a consumer gets it: `npm pack` makes the tarball, a new project in a temp dir installs it (from
// npm's cache, which `npm ci` filled; the registry only for what the cache lacks), type-checks a cdk8s app against
// its types, synthesizes with it, and finds the chart and the bundle where the README says they are.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { packagingTools, repoRoot, run } from '../support/packaging-tools.ts';

const work = mkdtempSync(join(tmpdir(), 'npm-consumer-'));
after(() => rmSync(work, { recursive: true, force: true }));
const consumer = join(work, 'consumer');
const rootPackage = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version: string }>;
};
const locked = (name: string) => lock.packages[`node_modules/${name}`]?.version as string;
// npm's cache after `npm ci` holds tarballs but not every package document a new resolution needs, so a fresh
// machine installs online: npm keeps the machine's registry, proxy and CA settings (a proxy's CA in
// NODE_EXTRA_CA_CERTS is refused as SELF_SIGNED_CERT_IN_CHAIN without it).
const NETWORK_SETTINGS =
  /^(npm_config_.*|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy)$/i;
const npmEnv: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => NETWORK_SETTINGS.test(entry[0]) && entry[1] !== undefined,
    ),
  ),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

const APP = `import { App, Chart } from 'cdk8s';
import { SampleDb, SampleDbCrds, SampleDbOperator, type SampleDbOperatorProps } from 'sampledb-operator';
import { API_VERSION } from 'sampledb-operator/api';

const app = new App({ outdir: 'dist' });
const crds = new Chart(app, 'crds');
new SampleDbCrds(crds, 'sampledb');
const props: SampleDbOperatorProps = { image: 'registry.example.com/op@sha256:${'a'.repeat(64)}', watchNamespaces: ['shop'] };
const platform = new Chart(app, 'platform');
new SampleDbOperator(platform, 'operator', props);
platform.addDependency(crds);
const shop = new Chart(app, 'shop');
const orders = new SampleDb(shop, 'orders', { namespace: 'shop', spec: { version: '16', storage: { size: '20Gi' } } });
shop.addDependency(crds);
app.synth();
console.log(JSON.stringify({ apiVersion: API_VERSION, database: orders.name }));
`;

// Bounds, not expectations: an install on a busy 2-core machine with a cold npm cache has taken over 4 minutes.
describe('npm package in a consumer project', { timeout: 1_500_000 }, () => {
  let tarball = '';

  it('packs', async () => {
    assert.ok(
      existsSync(join(repoRoot, 'lib/index.js')),
      'lib/ is built (npm run build; scripts/test.sh does it)',
    );
    // --ignore-scripts: prepack would rebuild lib/, which scripts/test.sh already built from these sources.
    const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      env: npmEnv,
    });
    assert.equal(pack.code, 0, pack.stderr);
    const [info] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
    tarball = join(work, info?.filename ?? '');
    assert.ok(existsSync(tarball), tarball);
  });

  it('installs from the tarball into a new project', async () => {
    mkdirSync(join(consumer, 'src'), { recursive: true });
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: {
          [rootPackage.name]: `file:${tarball}`,
          cdk8s: locked('cdk8s'),
          'cdk8s-plus-28': locked('cdk8s-plus-28'),
          constructs: locked('constructs'),
        },
      }),
    );
    const args = ['install', '--ignore-scripts', '--no-package-lock'];
    let install = await run('npm', [...args, '--offline'], {
      cwd: consumer,
      env: npmEnv,
      timeoutMs: 600_000,
    });
    if (install.code !== 0) {
      // The cache lacks something (a fresh machine that never ran npm ci): the registry is reachable.
      process.stderr.write(
        `npm-consumer: offline install failed, retrying online:\n${install.stderr.slice(-600)}\n`,
      );
      install = await run('npm', [...args, '--prefer-offline'], {
        cwd: consumer,
        env: npmEnv,
        timeoutMs: 600_000,
      });
    }
    assert.equal(install.code, 0, install.stderr);
    const installed = JSON.parse(
      readFileSync(join(consumer, 'node_modules/sampledb-operator/package.json'), 'utf8'),
    );
    assert.equal(installed.version, rootPackage.version);
    assert.equal(existsSync(join(consumer, 'node_modules/sampledb-operator/src')), false, 'no sources');
    assert.equal(existsSync(join(consumer, 'node_modules/sampledb-operator/test')), false, 'no tests');
  });

  it('type-checks a cdk8s app against the published types', async () => {
    writeFileSync(join(consumer, 'src/main.ts'), APP);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2024',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          verbatimModuleSyntax: true,
          erasableSyntaxOnly: true,
          allowImportingTsExtensions: true,
          skipLibCheck: false,
          types: [],
        },
        include: ['src'],
      }),
    );
    const tsc = await run(
      process.execPath,
      [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
      {
        cwd: consumer,
      },
    );
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
  });

  it('synthesizes with the installed package', async () => {
    const synth = await run(process.execPath, ['src/main.ts'], { cwd: consumer });
    assert.equal(synth.code, 0, synth.stderr);
    assert.deepEqual(JSON.parse(synth.stdout.trim().split('\n').at(-1) ?? '{}'), {
      apiVersion: 'sampledb.io/v1alpha1',
      database: 'orders',
    });
    const kinds = readdirSync(join(consumer, 'dist'))
      .sort()
      .flatMap((f) =>
        parseAllDocuments(readFileSync(join(consumer, 'dist', f), 'utf8')).map(
          (d) => (d.toJS() as { kind: string }).kind,
        ),
      );
    assert.ok(kinds.includes('CustomResourceDefinition'));
    assert.ok(kinds.includes('Deployment'));
    assert.ok(kinds.includes('Role'), 'watchNamespaces gave a Role');
    assert.ok(kinds.includes('SampleDB'));
  });

  it('carries a chart helm accepts and the OLM bundle', async () => {
    const installed = join(consumer, 'node_modules/sampledb-operator');
    const { helm } = packagingTools();
    const lint = await run(helm, ['lint', '--strict', join(installed, 'charts/sampledb-operator')], {
      env: {
        HELM_CACHE_HOME: join(work, 'helm'),
        HELM_CONFIG_HOME: join(work, 'helm'),
        HELM_DATA_HOME: join(work, 'helm'),
      },
    });
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
    assert.ok(existsSync(join(installed, 'bundle/manifests/sampledb-operator.clusterserviceversion.yaml')));
    assert.ok(existsSync(join(installed, 'bundle/metadata/annotations.yaml')));
  });
});
