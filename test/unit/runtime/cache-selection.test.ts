// InformerCache with a label-selected informer and by-name watches: which store an object lives in, and when an
// absent object is known to be absent. No watch is started (the transport is never called); the watches themselves
// are proven on a real apiserver (test/integration/sampledb/all-namespaces.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InformerCache } from '../../../src/runtime/cache.ts';
import type { KubeHttp } from '../../../src/runtime/http.ts';
import { CONFIG_MAPS, SECRETS } from '../../../src/runtime/kinds.ts';
import type { KubeObject } from '../../../src/runtime/resource.ts';

const SELECTOR = 'app.kubernetes.io/managed-by=sampledb-operator';
const secret = (name: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'apps', resourceVersion: '5', ...(labels ? { labels } : {}) },
});
const ours = { 'app.kubernetes.io/managed-by': 'sampledb-operator', other: 'x' };

describe('InformerCache: label-selected informer and by-name watches', () => {
  it('keeps a write where its watch would announce it: selected → informer, referenced → by-name, else nowhere', () => {
    const cache = new InformerCache({ http: {} as KubeHttp });
    const informer = cache.informerFor(SECRETS, undefined, { labelSelector: SELECTOR });
    assert.equal(cache.storeForWrite(SECRETS, secret('db-binding', ours)), informer.store);
    assert.equal(
      cache.storeForWrite(SECRETS, secret('app-creds')),
      undefined,
      'not selected, not referenced',
    );
    cache.watchNamed(SECRETS, [{ namespace: 'apps', name: 'app-creds' }]);
    const named = cache.storeForWrite(SECRETS, secret('app-creds'));
    assert.ok(named && named !== informer.store);
    named.applyOwnWrite(secret('app-creds'));
    assert.equal(cache.get(SECRETS, { namespace: 'apps', name: 'app-creds' })?.metadata.name, 'app-creds');
    cache.watchNamed(SECRETS, []);
    assert.equal(
      cache.get(SECRETS, { namespace: 'apps', name: 'app-creds' }),
      undefined,
      'no longer referenced',
    );
  });

  it('knows an object is absent only once its watch has listed; an informer without selector knows everything', () => {
    const cache = new InformerCache({ http: {} as KubeHttp });
    cache.informerFor(CONFIG_MAPS);
    assert.equal(cache.knows(CONFIG_MAPS, { namespace: 'apps', name: 'schema' }), true);
    const informer = cache.informerFor(SECRETS, undefined, { labelSelector: SELECTOR });
    cache.watchNamed(SECRETS, [{ namespace: 'apps', name: 'app-creds' }]);
    assert.equal(cache.knows(SECRETS, { namespace: 'apps', name: 'app-creds' }), false, 'not listed yet');
    informer.store.applyOwnWrite(secret('db-binding', ours));
    assert.equal(cache.knows(SECRETS, { namespace: 'apps', name: 'db-binding' }), true, 'it is cached');
  });
});
