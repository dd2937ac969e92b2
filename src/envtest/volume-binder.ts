import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  StorageV1Api,
  setHeaderOptions,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1PersistentVolumeSpec,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { parseQuantity } from '../api/quantity.ts';
import { InformerCache } from '../runtime/cache.ts';
import { KubeHttp } from '../runtime/http.ts';
import { PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES } from '../runtime/kinds.ts';
import type { KubeObject } from '../runtime/resource.ts';
import type { Store } from '../runtime/store.ts';

export const defaultStorageClassName = 'standard';
export const fakeProvisioner = 'envtest.local/hostpath';
const provisionedByAnnotation = 'pv.kubernetes.io/provisioned-by';
const selectedNodeAnnotation = 'volume.kubernetes.io/selected-node';

/**
 * Where a provisioned volume's data lives. The default only records a hostPath (kwok mounts nothing); the real
 * node's backend (real-node/local-volumes.ts) makes a file system per volume and grows it on expansion.
 */
export interface VolumeBackend {
  readonly provisioner: string;
  /** The StorageClass's volumeBindingMode: local volumes wait for the pod's node to be chosen. */
  readonly bindingMode: 'Immediate' | 'WaitForFirstConsumer';
  /** The PV's volume source (and node affinity) for a new volume of `bytes`. */
  create(
    name: string,
    bytes: number,
  ): Promise<Pick<V1PersistentVolumeSpec, 'hostPath' | 'local' | 'nodeAffinity'>>;
  /** Grows the volume to at least `bytes` before the PV and claim report the new size. */
  resize(name: string, bytes: number): Promise<void>;
  /** Removes the data of a deleted volume. */
  remove(name: string): Promise<void>;
}

export const hostPathRecords: VolumeBackend = {
  provisioner: fakeProvisioner,
  bindingMode: 'Immediate',
  create: async (name) => ({ hostPath: { path: `/tmp/envtest-volumes/${name}`, type: 'DirectoryOrCreate' } }),
  resize: async () => {},
  remove: async () => {},
};

/** The default StorageClass: bound at once, expandable, so StatefulSet volume resizes can be exercised. */
export function defaultStorageClass(backend: VolumeBackend = hostPathRecords): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: defaultStorageClassName,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    },
    provisioner: backend.provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: backend.bindingMode,
    allowVolumeExpansion: true,
  };
}

function quantityBytes(quantity: string | undefined): number {
  return quantity ? (parseQuantity(quantity) ?? Number.NaN) : 0;
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

function isConflictOrExists(error: unknown): boolean {
  return error instanceof ApiException && (error.code === 409 || error.code === 404);
}

/**
 * Stands in for a dynamic provisioner and resizer: for every unbound claim of a StorageClass served by its
 * backend's provisioner (`envtest.local/hostpath` by default) it creates a PersistentVolume pre-bound to the claim
 * (kube-controller-manager's PV controller completes the binding), grows volumes when a claim's request
 * grows, and deletes released volumes. With the default backend a hostPath volume is only a record: kwok mounts
 * nothing.
 *
 * Driven by watches of claims, volumes and StorageClasses (the runtime's reflector: it resumes, relists on 410 and
 * restarts stalled watches, so apiserver restarts and pauses need nothing here). Every change schedules one pass
 * over the cached objects; passes never overlap and changes during a pass coalesce into one more. Idle, it makes no
 * request (the watches stay open); a failed pass is retried after a second, which is the only timer.
 */
export class VolumeBinder {
  readonly #core: CoreV1Api;
  readonly #storage: StorageV1Api;
  readonly #http: KubeHttp;
  readonly #cache: InformerCache;
  readonly #claims: Store<KubeObject>;
  readonly #volumes: Store<KubeObject>;
  readonly #classes: Store<KubeObject>;
  readonly #retryMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #backend: VolumeBackend;
  /** Volumes created whose watch event has not arrived yet: a pass in between must not create them again. */
  readonly #created = new Set<string>();
  #running = false;
  #pass: Promise<void> | undefined;
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  #passes = 0;

  constructor(
    kubeConfig: KubeConfig,
    options: { retryMs?: number; onError?: (error: unknown) => void; backend?: VolumeBackend } = {},
  ) {
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#storage = kubeConfig.makeApiClient(StorageV1Api);
    this.#http = new KubeHttp(kubeConfig, { userAgent: 'envtest-volume-binder' });
    this.#cache = new InformerCache({ http: this.#http });
    this.#claims = this.#cache.informerFor(PERSISTENT_VOLUME_CLAIMS).store;
    this.#volumes = this.#cache.informerFor(PERSISTENT_VOLUMES).store;
    this.#classes = this.#cache.informerFor(STORAGE_CLASSES).store;
    for (const rt of [PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES])
      this.#cache.informerFor(rt).onChange(() => this.#schedule());
    this.#retryMs = options.retryMs ?? 1000;
    this.#onError = options.onError ?? (() => {});
    this.#backend = options.backend ?? hostPathRecords;
  }

  /** Passes run so far (each one reads only the caches): lets a test see that the binder stayed idle. */
  get passes(): number {
    return this.#passes;
  }

  async installDefaultStorageClass(): Promise<void> {
    try {
      await this.#storage.createStorageClass({ body: defaultStorageClass(this.#backend) });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 409)) throw error;
    }
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#cache.start();
    // The first pass waits for all three caches: before that, a missing volume may only be not listed yet.
    void this.#cache.waitForSync().then((synced) => {
      if (synced) this.#schedule();
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#retry);
    await this.#cache.stop();
    // A request hung on a paused or killed apiserver must not hold up shutdown.
    await Promise.race([this.#pass, sleep(1000)]);
    await this.#http.close();
  }

  #schedule(): void {
    if (!this.#running || !this.#cache.synced) return;
    if (this.#pass) {
      this.#again = true;
      return;
    }
    this.#pass = (async () => {
      do {
        this.#again = false;
        try {
          await this.reconcileOnce();
        } catch (error) {
          if (!this.#running) return;
          this.#onError(error);
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.#schedule(), this.#retryMs);
          this.#retry.unref();
        }
      } while (this.#again && this.#running);
    })().finally(() => {
      this.#pass = undefined;
    });
  }

  /** One pass over the cached claims and volumes: provision, grow, delete what needs it. */
  async reconcileOnce(): Promise<void> {
    this.#passes++;
    const ours = new Map<string, V1StorageClass>();
    for (const sc of this.#classes.list() as V1StorageClass[])
      if (sc.provisioner === this.#backend.provisioner && sc.metadata?.name) ours.set(sc.metadata.name, sc);
    for (const name of this.#created) if (this.#volumes.get(name)) this.#created.delete(name);
    for (const claim of this.#claims.list() as V1PersistentVolumeClaim[]) {
      const storageClass = ours.get(claim.spec?.storageClassName ?? '');
      if (!storageClass || claim.metadata?.deletionTimestamp) continue;
      const volumeName = claim.spec?.volumeName || volumeNameFor(claim);
      const volume = this.#volumes.get(volumeName) as V1PersistentVolume | undefined;
      if (!volume) {
        if (
          !claim.spec?.volumeName &&
          !this.#created.has(volumeName) &&
          this.#shouldProvision(claim, storageClass)
        )
          await this.#provision(claim, storageClass);
      } else if (volume.metadata?.annotations?.[provisionedByAnnotation] === this.#backend.provisioner) {
        await this.#resize(claim, volume);
      }
    }
    for (const volume of this.#volumes.list() as V1PersistentVolume[]) {
      if (
        volume.status?.phase === 'Released' &&
        volume.metadata?.annotations?.[provisionedByAnnotation] === this.#backend.provisioner &&
        (volume.spec?.persistentVolumeReclaimPolicy ?? 'Delete') === 'Delete' &&
        !volume.metadata.deletionTimestamp
      ) {
        await this.#ignoreGone(this.#core.deletePersistentVolume({ name: volume.metadata.name! }));
        await this.#backend.remove(volume.metadata.name!);
      }
    }
  }

  #shouldProvision(claim: V1PersistentVolumeClaim, storageClass: V1StorageClass): boolean {
    if (claim.status?.phase && claim.status.phase !== 'Pending') return false;
    if (storageClass.volumeBindingMode !== 'WaitForFirstConsumer') return true;
    return Boolean(claim.metadata?.annotations?.[selectedNodeAnnotation]);
  }

  async #provision(claim: V1PersistentVolumeClaim, storageClass: V1StorageClass): Promise<void> {
    const name = volumeNameFor(claim);
    const storage = claim.spec?.resources?.requests?.storage ?? '1Gi';
    const source = await this.#backend.create(name, quantityBytes(storage));
    const body: V1PersistentVolume = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { [provisionedByAnnotation]: this.#backend.provisioner } },
      spec: {
        ...source,
        capacity: { storage },
        accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
        volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
        storageClassName: storageClass.metadata!.name!,
        persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: claim.metadata!.namespace!,
          name: claim.metadata!.name!,
          uid: claim.metadata!.uid!,
        },
      },
    };
    try {
      await this.#core.createPersistentVolume({ body });
    } catch (error) {
      if (!isConflictOrExists(error)) throw error;
    }
    this.#created.add(name);
  }

  async #resize(claim: V1PersistentVolumeClaim, volume: V1PersistentVolume): Promise<void> {
    const requested = claim.spec?.resources?.requests?.storage;
    if (!requested || claim.status?.phase !== 'Bound') return;
    const wanted = quantityBytes(requested);
    if (wanted > quantityBytes(volume.spec?.capacity?.storage)) {
      await this.#backend.resize(volume.metadata!.name!, wanted);
      await this.#ignoreGone(
        this.#core.patchPersistentVolume(
          { name: volume.metadata!.name!, body: { spec: { capacity: { storage: requested } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
    }
    if (wanted > quantityBytes(claim.status?.capacity?.storage)) {
      await this.#ignoreGone(
        this.#core.patchNamespacedPersistentVolumeClaimStatus(
          {
            name: claim.metadata!.name!,
            namespace: claim.metadata!.namespace!,
            body: {
              status: { capacity: { storage: requested }, allocatedResources: { storage: requested } },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
    }
  }

  async #ignoreGone(request: Promise<unknown>): Promise<void> {
    try {
      await request;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

function volumeNameFor(claim: V1PersistentVolumeClaim): string {
  return `pvc-${claim.metadata?.uid ?? 'unknown'}`;
}
