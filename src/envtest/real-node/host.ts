// Small helpers for the commands and kernel settings the real node uses on the machine.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command; rejects with its stderr in the message when it exits non-zero. */
export function command(file: string, args: readonly string[], input?: string): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve({ stdout, stderr });
    });
    // A command that exits before reading its input closes the pipe; that is its exit status's business.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input ?? '');
  });
}

/** /proc/sys path of a sysctl ("net.ipv4.ip_forward" → /proc/sys/net/ipv4/ip_forward). */
export function sysctlPath(key: string): string {
  return `/proc/sys/${key.replaceAll('.', '/')}`;
}

/** The current value of a sysctl, or undefined when this kernel does not have it. */
export async function readSysctl(key: string): Promise<string | undefined> {
  try {
    return (await readFile(sysctlPath(key), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat): tells a reused pid apart. */
export async function processStartTime(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** POSIX sh single-quoting. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
