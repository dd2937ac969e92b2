// The `--node` and `--wait-for-node` options shared by `npm run cluster` and `npm run dev`.

export interface NodeArguments {
  readonly node: 'kwok' | 'real';
  /** How long a real node waits for another one on this machine to stop. */
  readonly lockWaitMs: number;
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  const index = args.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  if (index < 0) return undefined;
  const arg = args[index]!;
  const value = arg.includes('=') ? arg.slice(flag.length + 1) : args[index + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`);
  return value;
}

export function nodeArguments(args: readonly string[]): NodeArguments {
  const node = flagValue(args, '--node') ?? 'kwok';
  if (node !== 'kwok' && node !== 'real') throw new Error(`--node must be "kwok" or "real", got "${node}"`);
  const wait = flagValue(args, '--wait-for-node') ?? '0';
  const seconds = Number(wait);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`--wait-for-node must be a number of seconds, got "${wait}"`);
  return { node, lockWaitMs: seconds * 1000 };
}
