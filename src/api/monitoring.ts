// spec.monitoring: database metrics through a postgres_exporter sidecar, scraped by a PodMonitor.
import { type Static, Type } from '@sinclair/typebox';
import { IMAGE_REFERENCE_PATTERN } from './formats.ts';

/**
 * The sidecar image when `spec.monitoring.exporter.image` is not set: the Prometheus community's postgres_exporter.
 * Any postgres_exporter works: the sidecar is configured only through DATA_SOURCE_URI/USER/PASS and its port.
 */
export const DEFAULT_EXPORTER_IMAGE = 'quay.io/prometheuscommunity/postgres-exporter:v0.17.1';

export const ExporterSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Run a postgres_exporter sidecar next to PostgreSQL, on port 9187 ("metrics"). It logs in as the ' +
          'role sampledb_monitor (member of pg_monitor only), whose password the operator generates into the ' +
          'Secret <name>-monitoring, and creates with a Job once the database is initialized (also when enabled ' +
          'later). Default: false.',
      }),
    ),
    image: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        pattern: IMAGE_REFERENCE_PATTERN,
        description: `The exporter image: repository[:tag][@digest]. Default: ${DEFAULT_EXPORTER_IMAGE}.`,
      }),
    ),
  },
  { description: 'The postgres_exporter sidecar.' },
);

export const MonitoringSchema = Type.Object(
  { exporter: Type.Optional(ExporterSchema) },
  { description: 'Prometheus metrics of the database.' },
);

export type MonitoringSpec = Static<typeof MonitoringSchema>;
