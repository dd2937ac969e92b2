/** Appends extra flags, letting an extra `--name=value` replace a default flag of the same name. */
export function mergeFlags(defaults: readonly string[], extra: readonly string[]): string[] {
  const nameOf = (flag: string): string => flag.split('=', 1)[0] ?? flag;
  const overridden = new Set(extra.map(nameOf));
  return [...defaults.filter((flag) => !overridden.has(nameOf(flag))), ...extra];
}
