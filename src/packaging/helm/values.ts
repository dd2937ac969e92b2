// The Helm chart's values: one TypeBox schema that is values.schema.json (helm validates every install, upgrade and
// template against it), whose defaults are values.yaml, whose descriptions are the values table in the chart README
// and docs, and which the tests and the generator validate with Ajv before mapping values to construct props.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { IMAGE_REPOSITORY_PATTERN } from '../../api/index.ts';
import { type FieldError, OPERATOR_DEFAULTS, ValidationError } from '../../index.ts';
import { DIST_IMAGE_REPOSITORY } from '../sources.ts';

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
// A Kubernetes quantity without the exponent form (`1e9`): the chart computes the controller's heap from the memory
// limit in a template, and exponents cannot be evaluated there. `1G`, `1Gi`, `1024Mi` and `1073741824` all work.
const QUANTITY = '^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$';
const MEMORY = '^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$';
const ZERO = '^[0.]*[a-zA-Z]*$';

const quantity = (description: string, pattern: string, defaultValue?: string) =>
  Type.String({ pattern, not: { pattern: ZERO }, minLength: 1, description, default: defaultValue });

const d = OPERATOR_DEFAULTS;

export const ChartValuesSchema = Type.Object(
  {
    image: Type.Object(
      {
        repository: Type.String({
          pattern: '^[^\\s@:]+(:[0-9]+)?(/[^\\s@:]+)*$',
          default: DIST_IMAGE_REPOSITORY,
          description:
            'Controller image repository. No image is published for you: build the Dockerfile and push it, then set this.',
        }),
        tag: Type.String({
          pattern: '^([\\w][\\w.-]{0,127})?$',
          default: '',
          description: "Image tag. Default: the chart's appVersion. Ignored when `digest` is set.",
        }),
        digest: Type.String({
          pattern: '^(sha256:[a-f0-9]{64})?$',
          default: '',
          description: 'Image digest (`sha256:<64 hex>`). Pin by digest in production; it wins over `tag`.',
        }),
        pullPolicy: Type.Union(
          [Type.Literal('IfNotPresent'), Type.Literal('Always'), Type.Literal('Never')],
          {
            default: d.imagePullPolicy,
            description: 'Image pull policy.',
          },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    imagePullSecrets: Type.Array(Type.String({ pattern: DNS_LABEL, maxLength: 253 }), {
      default: [],
      description: 'Names of Secrets in the operator namespace for pulling the image.',
    }),
    namespace: Type.Union([Type.Literal(''), Type.String({ pattern: DNS_LABEL, maxLength: 63 })], {
      default: '',
      description:
        'Namespace of the operator. Default: the release namespace (`helm install -n`). Construct default: `sampledb-system`.',
    }),
    createNamespace: Type.Boolean({
      default: false,
      description:
        'Emit the Namespace, labelled PodSecurity `restricted`; only for a `namespace` other than the release namespace, ' +
        'which helm itself must find or create. `helm uninstall` then deletes it with everything in it. Construct ' +
        'default: `true`.',
    }),
    name: Type.String({
      pattern: DNS_LABEL,
      maxLength: 63,
      default: d.name,
      description: 'Base name of the Deployment, ServiceAccount, roles, Services and admission policy.',
    }),
    replicas: Type.Integer({
      minimum: 1,
      default: d.replicas,
      description: 'Controller replicas (one leader, the others warm standbys).',
    }),
    leaderElection: Type.Boolean({
      default: d.leaderElection,
      description: 'Elect a leader through a Lease; required when `replicas` > 1.',
    }),
    watchNamespaces: Type.Array(Type.String({ pattern: DNS_LABEL, maxLength: 63 }), {
      default: [],
      uniqueItems: true,
      description:
        '`[]`: all namespaces, through a ClusterRole. A list: only these namespaces, with a Role and RoleBinding in each ' +
        '(they must exist) and a ClusterRole that reads StorageClasses and VolumeSnapshotClasses and patches ' +
        'PersistentVolumes (reclaimPolicy Retain when a deletion policy cannot be satisfied).',
    }),
    logLevel: Type.Union(
      [Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')],
      { default: d.logLevel, description: 'Log level.' },
    ),
    resources: Type.Object(
      {
        requests: Type.Object(
          {
            cpu: quantity('CPU request.', QUANTITY, d.resources.requests.cpu),
            memory: quantity('Memory request.', MEMORY, d.resources.requests.memory),
          },
          { additionalProperties: false, default: {} },
        ),
        limits: Type.Object(
          {
            cpu: Type.Optional(quantity('CPU limit. Default: none.', QUANTITY)),
            memory: quantity(
              'Memory limit; the V8 heap (`--max-old-space-size`) is set to 75% of it. Exponent forms such as `1e9` are refused.',
              MEMORY,
              d.resources.limits.memory,
            ),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'Controller container resources.',
      },
    ),
    metricsPort: Type.Integer({
      minimum: 1024,
      maximum: 65535,
      default: d.metricsPort,
      description: 'Port of the Prometheus `/metrics` endpoint (and of the metrics Service).',
    }),
    healthPort: Type.Integer({
      minimum: 1024,
      maximum: 65535,
      default: d.healthPort,
      description: 'Port of `/healthz` and `/readyz`; must differ from `metricsPort`.',
    }),
    postgresImageRepository: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: IMAGE_REPOSITORY_PATTERN,
      default: d.postgresImageRepository,
      description:
        'Repository of the PostgreSQL images (`<repository>:<spec.version>`), for mirrors and air-gapped clusters; no tag or digest. `spec.image` overrides it per SampleDB.',
    }),
    deletionProtection: Type.Boolean({
      default: d.deletionProtection,
      description:
        'Emit the ValidatingAdmissionPolicy that refuses to delete a SampleDB with `spec.deletion.protection: true`.',
    }),
    monitoring: Type.Object(
      {
        enabled: Type.Boolean({
          default: d.monitoring,
          description:
            "Emit the Prometheus operator objects: a ServiceMonitor for the operator, a PodMonitor for the SampleDBs' exporter sidecars and a PrometheusRule with the alerts (docs/runbooks.md). Needs the monitoring.coreos.com/v1 CRDs.",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, title: 'sampledb-operator chart values' },
);

export type ChartValues = Static<typeof ChartValuesSchema>;

/** What helm adds to the values when it renders: the release and the chart. */
export interface RenderContext {
  readonly releaseNamespace: string;
  readonly appVersion: string;
}

type SchemaNode = TSchema & { properties?: Record<string, SchemaNode>; default?: unknown };

/** The defaults of a schema node, nested objects included (what values.yaml holds). */
function defaultsOf(node: SchemaNode): unknown {
  if (node.type === 'object' && node.properties) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node.properties)) {
      const value = defaultsOf(child);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  return node.default;
}

export function defaultValues(): ChartValues {
  return defaultsOf(ChartValuesSchema as SchemaNode) as ChartValues;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Helm's merge of user values over the chart's: maps merge key by key, everything else replaces, null deletes. */
export function mergeValues(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else out[key] = mergeValues(base[key], value);
  }
  return out;
}

const validateValues = new Ajv({ allErrors: true, strict: false }).compile(ChartValuesSchema);

/** The chart defaults with `overrides` merged in as helm merges them, checked against values.schema.json. */
export function chartValues(overrides: Record<string, unknown> = {}): ChartValues {
  const values = mergeValues(defaultValues(), overrides);
  if (!validateValues(values)) {
    const errors: FieldError[] = (validateValues.errors ?? []).map((e) => ({
      field: e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)',
      message: e.message ?? 'invalid',
    }));
    throw new ValidationError('chart values', errors);
  }
  return values;
}
