// Run as its own process (`node --expose-gc cache-memory.ts <kubeconfig> <namespace> <mode>`): caches the kinds a
// SampleDB's objects are made of, as the operator's runtime does, and prints the heap they take as JSON. Modes: how
// metadata.managedFields is trimmed — `apply` (the default: Apply entries only), `none` (all dropped), `all` (kept).
import { KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/api/index.ts';
import {
  CONFIG_MAPS,
  InformerCache,
  JOBS,
  KubeHttp,
  type KubeObject,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  type ResourceType,
  SECRETS,
  SERVICES,
  STATEFUL_SETS,
  type StoreOptions,
  silentLogger,
} from '../../src/runtime/index.ts';

const kinds: ResourceType[] = [
  { group: GROUP, version: VERSION, plural: 'sampledbs', kind: 'SampleDB', namespaced: true },
  SECRETS,
  CONFIG_MAPS,
  SERVICES,
  STATEFUL_SETS,
  JOBS,
  PODS,
  PERSISTENT_VOLUME_CLAIMS,
];

const [kubeconfig, namespace, mode] = process.argv.slice(2) as [string, string, 'apply' | 'none' | 'all'];
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const http = new KubeHttp(kc);
// Load the code paths first (one small list), so the baseline holds no objects but all the code.
await http.list(CONFIG_MAPS, { namespace, limit: 1 });
const heap = () => {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};
const storeOptions: StoreOptions<KubeObject> =
  mode === 'all'
    ? { dropManagedFields: false }
    : mode === 'none'
      ? {
          transform: (o) => {
            const { managedFields: _dropped, ...metadata } = o.metadata;
            return { ...o, metadata };
          },
        }
      : {};
const baseline = heap();
const cache = new InformerCache({ http, namespace, logger: silentLogger });
for (const rt of kinds) cache.informerFor(rt, storeOptions);
cache.start();
await cache.waitForSync();
const objects = kinds.reduce((n, rt) => n + (cache.storeFor(rt)?.size ?? 0), 0);
const bytes = heap() - baseline;
process.stdout.write(JSON.stringify({ mode, objects, bytes }));
await cache.stop();
await http.close();
process.exit(0);
