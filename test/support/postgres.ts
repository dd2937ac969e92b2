// A throwaway PostgreSQL server for data-path tests: its own data directory, a free loopback port and a unix socket
// in a temp dir. As root, the server runs as the `postgres` OS user (PostgreSQL refuses to run as root).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  readonly superuser: string;
  readonly password: string;
  /** Directory of the server's binaries; put it first on PATH so scripts use the same version. */
  readonly binDir: string;
  /** PATH with `binDir` first. */
  readonly path: string;
  /** A scratch directory that lives as long as the server (for dumps, SQL files, ...). */
  readonly scratchDir: string;
  /** The data directory. */
  readonly dataDir: string;
  /** Env for a libpq client connecting as the superuser over TCP. */
  clientEnv(): Record<string, string>;
  /** Runs SQL as the superuser; returns unaligned, tuples-only output. Throws on error. */
  query(sql: string, database?: string): string;
  /** A streaming standby of this server (pg_basebackup -R), on its own port. */
  startStandby(): Promise<{ port: number; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL, e.g. /usr/lib/postgresql/15/bin (PG_BIN_DIR overrides). */
export function findPostgresBinDir(): string | undefined {
  const override = process.env.PG_BIN_DIR;
  if (override) return existsSync(join(override, 'initdb')) ? override : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Runs a server binary, as `postgres` when we are root. */
function runAsServerUser(binary: string, args: string[]): { status: number | null; output: string } {
  const [command, commandArgs] = isRoot()
    ? ['runuser', ['-u', 'postgres', '--', binary, ...args]]
    : [binary, args];
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', timeout: 120_000 });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}`,
  };
}

export interface StartOptions {
  /** Where the server's directories go (its data directory is `<in>/<temp>/data`); default: the temp dir. */
  in?: string;
}

export async function startPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const binDir = findPostgresBinDir();
  if (!binDir)
    throw new Error('no PostgreSQL server binaries found under /usr/lib/postgresql (set PG_BIN_DIR)');
  const root = mkdtempSync(join(options.in ?? tmpdir(), 'sampledb-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  const scratchDir = join(root, 'scratch');
  const pwFile = join(root, 'pwfile');
  const logFile = join(root, 'server.log');
  const superuser = 'postgres';
  const password = randomBytes(18).toString('base64url');
  const port = await freePort();
  let started = false;
  const stopNow = () => {
    if (started)
      runAsServerUser(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30']);
    started = false;
    rmSync(root, { recursive: true, force: true });
  };
  // A test runner that dies before `stop` must not leave a server behind.
  process.once('exit', stopNow);
  try {
    for (const dir of [socketDir, scratchDir]) execFileSync('mkdir', ['-p', dir]);
    writeFileSync(pwFile, `${password}\n`);
    chmodSync(root, 0o755);
    chmodSync(scratchDir, 0o777);
    if (isRoot()) {
      const { uid, gid } = postgresIds();
      for (const path of [root, socketDir, pwFile]) chownSync(path, uid, gid);
    }
    const init = runAsServerUser(join(binDir, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      superuser,
      `--pwfile=${pwFile}`,
      '--auth-host=scram-sha-256',
      '--auth-local=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
    ]);
    if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
    const serverOptions = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const start = runAsServerUser(join(binDir, 'pg_ctl'), [
      'start',
      '-D',
      dataDir,
      '-o',
      serverOptions,
      '-l',
      logFile,
      '-w',
      '-t',
      '60',
    ]);
    started = start.status === 0;
    if (!started) throw new Error(`pg_ctl start failed:\n${start.output}`);
  } catch (error) {
    process.removeListener('exit', stopNow);
    stopNow();
    throw error;
  }

  const path = `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  const clientEnv = (): Record<string, string> => ({
    PATH: path,
    PGHOST: '127.0.0.1',
    PGPORT: String(port),
    PGUSER: superuser,
    PGPASSWORD: password,
  });
  return {
    host: '127.0.0.1',
    port,
    superuser,
    password,
    binDir,
    path,
    scratchDir,
    dataDir,
    clientEnv,
    query(sql, database = 'postgres') {
      const result = spawnSync(
        join(binDir, 'psql'),
        ['-X', '-q', '-tA', '-v', 'ON_ERROR_STOP=1', '-d', database, '-c', sql],
        {
          encoding: 'utf8',
          env: clientEnv(),
          timeout: 60_000,
        },
      );
      if (result.status !== 0) throw new Error(`psql failed (${result.status}): ${result.stderr}`);
      return result.stdout.trim();
    },
    async startStandby() {
      const standbyDir = join(root, `standby-${randomBytes(4).toString('hex')}`);
      const standbyPort = await freePort();
      const conninfo = `host=127.0.0.1 port=${port} user=${superuser} password=${password}`;
      const base = runAsServerUser(join(binDir, 'pg_basebackup'), [
        '-d',
        conninfo,
        '-D',
        standbyDir,
        '-R',
        '-X',
        'stream',
      ]);
      if (base.status !== 0) throw new Error(`pg_basebackup failed:\n${base.output}`);
      const options = `-p ${standbyPort} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`;
      const ctl = (args: string[]) =>
        runAsServerUser(join(binDir, 'pg_ctl'), [...args, '-D', standbyDir, '-w', '-t', '60']);
      const start = ctl(['start', '-o', options, '-l', join(root, 'standby.log')]);
      if (start.status !== 0) throw new Error(`standby start failed:\n${start.output}`);
      return {
        port: standbyPort,
        async stop() {
          ctl(['stop', '-m', 'immediate']);
          rmSync(standbyDir, { recursive: true, force: true });
        },
      };
    },
    async stop() {
      process.removeListener('exit', stopNow);
      stopNow();
    },
  };
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a POSIX sh script with exactly the given env (plus PATH), bounded in time. */
export async function runScript(
  script: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<ScriptRun> {
  return await runCommand('sh', ['-c', script], env, timeoutMs);
}

/**
 * Like `runScript`, as the `postgres` OS user when we are root: what a Job pod running as uid 999 does, and what
 * initdb and pg_ctl need (they refuse root).
 */
export async function runScriptAsServerUser(
  script: string,
  env: Record<string, string>,
  timeoutMs = 180_000,
): Promise<ScriptRun> {
  if (!isRoot()) return await runScript(script, env, timeoutMs);
  return await runCommand('runuser', ['-u', 'postgres', '--', 'sh', '-c', script], env, timeoutMs);
}

async function runCommand(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<ScriptRun> {
  return await new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
