import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { trackProcessGroup, untrackProcessGroup } from './cleanup.ts';

export type LogSink = (line: string) => void;

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const keptLines = 200;

/** A control-plane binary running in its own process group, with its recent output kept for error reports. */
export class ManagedProcess {
  readonly name: string;
  readonly exited: Promise<ProcessExit>;
  readonly #child: ChildProcess;
  readonly #recent: string[] = [];
  #exit: ProcessExit | undefined;

  constructor(name: string, binary: string, args: readonly string[], log?: LogSink) {
    this.name = name;
    this.#child = spawn(binary, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = this.#child.pid;
    if (pid !== undefined) trackProcessGroup(pid);
    const keep = (line: string): void => {
      this.#recent.push(line);
      if (this.#recent.length > keptLines) this.#recent.shift();
      log?.(`[${name}] ${line}`);
    };
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', keep);
    }
    this.exited = new Promise((resolve) => {
      this.#child.once('error', (error) => {
        keep(`spawn failed: ${error.message}`);
        this.#exit = { code: null, signal: null };
        resolve(this.#exit);
      });
      this.#child.once('exit', (code, signal) => {
        if (pid !== undefined) untrackProcessGroup(pid);
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  recentOutput(): string {
    return this.#recent.join('\n');
  }

  describeExit(): string {
    if (!this.#exit) return `${this.name} is running`;
    const how = this.#exit.signal ? `signal ${this.#exit.signal}` : `code ${this.#exit.code}`;
    return `${this.name} exited with ${how}; last output:\n${this.recentOutput()}`;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.running || this.#child.pid === undefined) return;
    try {
      process.kill(-this.#child.pid, signal);
    } catch {
      // exited between the check and the kill
    }
  }

  /** SIGTERM, then SIGKILL once graceMs has passed. Resolves when the process has exited. */
  async stop(graceMs = 3000): Promise<void> {
    if (!this.running) return;
    // A stopped process cannot handle SIGTERM.
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.signal('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    await this.exited;
  }

  kill(): Promise<ProcessExit> {
    this.signal('SIGKILL');
    return this.exited;
  }
}
