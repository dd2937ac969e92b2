import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { mergeFlags } from './flags.ts';
import { kwokFastStages } from './kwok-stages.ts';
import { type LogSink, ManagedProcess } from './process.ts';
import { pollUntil } from './wait.ts';

export const fakeNodeAnnotation = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;
export const podCidr = '10.244.0.0/16';

export interface KwokOptions {
  readonly binary: string;
  readonly kubeconfig: string;
  readonly workDir: string;
  readonly extraArgs?: readonly string[];
  readonly log?: LogSink;
  /** See ControlPlaneOptions.kwokPodSelector. */
  readonly podSelector?: readonly KwokSelectorRequirement[];
}

/** A kwok Stage selector requirement: `key` is a jq query on the object, e.g. `.metadata.labels["app"]`. */
export interface KwokSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

/**
 * The stages with `requirements` added to the selectors of the pod stages that play the kubelet (pod-ready and
 * pod-complete), so pods that do not meet them are left alone; pod-delete still applies to every pod.
 */
export function kwokStagesWithPodSelector(
  stages: string,
  requirements: readonly KwokSelectorRequirement[],
): string {
  if (requirements.length === 0) return stages;
  const rendered = requirements
    .map(
      (r) =>
        `    - key: ${JSON.stringify(r.key)}\n      operator: ${JSON.stringify(r.operator)}\n` +
        (r.values?.length
          ? `      values:\n${r.values.map((v) => `      - ${JSON.stringify(v)}\n`).join('')}`
          : ''),
    )
    .join('');
  return stages
    .split('\n---\n')
    .map((doc) =>
      /\n {2}name: pod-(ready|complete)\n/.test(doc)
        ? doc.replace(
            '  selector:\n    matchExpressions:\n',
            `  selector:\n    matchExpressions:\n${rendered}`,
          )
        : doc,
    )
    .join('\n---\n');
}

/** kwok plays the kubelet for nodes annotated kwok.x-k8s.io/node=fake, and only for those. */
export async function startKwok(options: KwokOptions): Promise<ManagedProcess> {
  const configPath = join(options.workDir, 'kwok.yaml');
  // Stages only: a KwokConfiguration document here would skip kwok's defaulting of the fields it omits.
  await writeFile(configPath, kwokStagesWithPodSelector(kwokFastStages, options.podSelector ?? []));
  const args = mergeFlags(
    [
      `--kubeconfig=${options.kubeconfig}`,
      `--config=${configPath}`,
      `--cidr=${podCidr}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${fakeNodeAnnotation.key}=${fakeNodeAnnotation.value}`,
    ],
    options.extraArgs ?? [],
  );
  return new ManagedProcess('kwok', options.binary, args, options.log);
}

/**
 * What one fake node offers. kubelet's default of 110 pods (and a real machine's CPU and memory) would stop a scale
 * test at 110 pods ("Too many pods"); kwok runs nothing, so the node claims room for thousands of pods whose
 * requests add up (e.g. 2,000 pods requesting 250m CPU and 512Mi each: 500 CPU, 1000Gi).
 */
export const fakeNodeCapacity = { cpu: '2k', memory: '8Ti', pods: '5000' } as const;

export function fakeNode(name: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: {
        [fakeNodeAnnotation.key]: fakeNodeAnnotation.value,
        'node.alpha.kubernetes.io/ttl': '0',
      },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
    // No taint: workloads under test schedule here without tolerations, as on a plain cluster.
    spec: {},
    status: {
      allocatable: { ...fakeNodeCapacity },
      capacity: { ...fakeNodeCapacity },
    },
  };
}

/** Creates the fake nodes and waits until kwok reports them Ready (proof that kwok is up and managing). */
export async function createFakeNodes(
  kubeConfig: KubeConfig,
  names: readonly string[],
  failFast: () => string | undefined,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await Promise.all(
    names.map(async (name) => {
      await core.createNode({ body: fakeNode(name) });
      // TaintNodesByCondition admission adds node.kubernetes.io/not-ready on create; in a real cluster the
      // node-lifecycle controller lifts it once the kubelet reports Ready. That controller is not run (see
      // controllers.ts), so the taint is lifted here.
      await core.patchNode(
        { name, body: { spec: { taints: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }),
  );
  await pollUntil(
    'kwok fake nodes Ready',
    async () => {
      const nodes = await core.listNode({ labelSelector: 'type=kwok' });
      const ready = nodes.items.filter((node) =>
        node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length >= names.length ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, failFast },
  );
}
