/**
 * How the runtime and its users turn a thrown value into text for a log field, a probe body or a condition message:
 * `Name: message` for an Error (the stack only when asked, e.g. for the final fatal line), the value otherwise.
 */
export function describeError(err: unknown, opts: { stack?: boolean } = {}): string {
  if (!(err instanceof Error)) return String(err);
  return (opts.stack ? err.stack : undefined) ?? `${err.name}: ${err.message}`;
}
