// The apiserver's two time formats, written in one place so every timestamp the runtime and its users put on an
// object (conditions, Events, Leases, status fields) has the precision its field declares.

/** metav1.Time (RFC 3339, second precision): conditions' lastTransitionTime and most status timestamps. */
export function metaTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** metav1.MicroTime (RFC 3339, microsecond precision): events.k8s.io eventTime and Lease acquire/renew times. */
export function microTime(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}
