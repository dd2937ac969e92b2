// What a SampleDB publishes to the applications that use it, by name: the client Service (and its DNS name), the
// binding Secret and the connection ConfigMap. These names are part of the API's contract (applications resolve and
// mount them), so the cdk8s construct, the Pulumi component and the controller can all take them from here.

export interface SampleDbClientNames {
  /** The client Service, named after the SampleDB. */
  readonly service: string;
  /** Secret with the connection details (user, password, uri), written by the operator. */
  readonly bindingSecret: string;
  /** ConfigMap with the non-secret connection details, written by the operator. */
  readonly connectionConfigMap: string;
}

export function clientNamesFor(sampleDbName: string): SampleDbClientNames {
  return {
    service: sampleDbName,
    bindingSecret: `${sampleDbName}-binding`,
    connectionConfigMap: `${sampleDbName}-connection`,
  };
}

/**
 * A Service's DNS name inside the cluster, without the cluster domain (it differs between clusters, and the pods'
 * resolver search path completes it): the host a SampleDB's `status.endpoint` gives.
 */
export function serviceHost(serviceName: string, namespace: string): string {
  return `${serviceName}.${namespace}.svc`;
}
