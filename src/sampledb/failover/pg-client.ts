// Just enough of the PostgreSQL frontend/backend protocol (v3) for the operator's few questions to an instance
// (ADR 0008): startup, SCRAM-SHA-256 (or md5) authentication, the simple query protocol with text results.
// One short-lived connection per question, bounded by a timeout: an instance that does not answer in time is an
// observation ("unavailable"), not an error that stalls the reconcile. The password never leaves this module, and
// errors name the server's SQLSTATE and message only.
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Socket } from 'node:net';

export interface PgConnectOptions {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** For the connection and every query. */
  timeoutMs: number;
}

export class PgError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.name = 'PgError';
    this.code = code;
  }
}

export type Row = Record<string, string | null>;

const PROTOCOL_V3 = 196608;

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');

function startupMessage(user: string, database: string): Buffer {
  const protocol = Buffer.alloc(4);
  protocol.writeInt32BE(PROTOCOL_V3);
  const body = Buffer.concat([
    protocol,
    cstring('user'),
    cstring(user),
    cstring('database'),
    cstring(database),
    cstring('application_name'),
    cstring('sampledb-operator'),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([length, body]);
}

interface BackendMessage {
  type: string;
  body: Buffer;
}

function errorFields(body: Buffer): { code?: string; message: string } {
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const key = String.fromCharCode(body[at] as number);
    const end = body.indexOf(0, at + 1);
    fields[key] = body.toString('utf8', at + 1, end);
    at = end + 1;
  }
  return { code: fields.C, message: fields.M ?? 'unknown server error' };
}

/** SCRAM-SHA-256 (RFC 7677) as PostgreSQL speaks it: the user name comes from the startup message. */
class Scram {
  readonly #password: string;
  readonly #clientNonce = randomBytes(18).toString('base64');
  #authMessage = '';
  #saltedPassword = Buffer.alloc(0);

  constructor(password: string) {
    this.#password = password;
  }

  get firstBare(): string {
    return `n=,r=${this.#clientNonce}`;
  }

  final(serverFirst: string): string {
    const attrs = Object.fromEntries(serverFirst.split(',').map((p) => [p[0], p.slice(2)]));
    const nonce = attrs.r ?? '';
    if (!nonce.startsWith(this.#clientNonce))
      throw new PgError('SCRAM: the server nonce does not extend ours');
    const salt = Buffer.from(attrs.s ?? '', 'base64');
    const iterations = Number(attrs.i);
    if (!Number.isInteger(iterations) || iterations < 1) throw new PgError('SCRAM: bad iteration count');
    this.#saltedPassword = pbkdf2Sync(this.#password.normalize('NFKC'), salt, iterations, 32, 'sha256');
    const clientKey = createHmac('sha256', this.#saltedPassword).update('Client Key').digest();
    const storedKey = createHash('sha256').update(clientKey).digest();
    const withoutProof = `c=biws,r=${nonce}`;
    this.#authMessage = `${this.firstBare},${serverFirst},${withoutProof}`;
    const signature = createHmac('sha256', storedKey).update(this.#authMessage).digest();
    const proof = Buffer.from(clientKey.map((byte, i) => byte ^ (signature[i] as number)));
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  verify(serverFinal: string): void {
    const serverKey = createHmac('sha256', this.#saltedPassword).update('Server Key').digest();
    const expected = createHmac('sha256', serverKey).update(this.#authMessage).digest();
    const got = Buffer.from(serverFinal.replace(/^v=/, '').split(',')[0] ?? '', 'base64');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      throw new PgError('SCRAM: the server could not prove it knows the password');
    }
  }
}

/** One connection. Use {@link pgQuery} for the usual connect-ask-close. */
export class PgConnection {
  readonly #socket: Socket;
  readonly #timeoutMs: number;
  #buffer = Buffer.alloc(0);
  #waiting: ((m: BackendMessage | Error) => void) | undefined;
  #queue: (BackendMessage | Error)[] = [];

  private constructor(socket: Socket, timeoutMs: number) {
    this.#socket = socket;
    this.#timeoutMs = timeoutMs;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (err) => this.#push(err));
    socket.on('close', () => this.#push(new PgError('connection closed by the server')));
  }

  static async connect(options: PgConnectOptions): Promise<PgConnection> {
    const socket = new Socket();
    const connection = new PgConnection(socket, options.timeoutMs);
    try {
      await connection.#within(
        new Promise<void>((resolve, reject) => {
          socket.once('connect', resolve);
          socket.once('error', reject);
          socket.connect(options.port, options.host);
        }),
        'connect',
      );
      socket.setNoDelay(true);
      socket.write(startupMessage(options.user, options.database));
      await connection.#authenticate(options);
      return connection;
    } catch (err) {
      socket.destroy();
      throw err;
    }
  }

  async #authenticate(options: PgConnectOptions): Promise<void> {
    let scram: Scram | undefined;
    for (;;) {
      const m = await this.#next();
      if (m.type === 'E') {
        const { code, message: text } = errorFields(m.body);
        throw new PgError(text, code);
      }
      if (m.type === 'Z') return;
      if (m.type !== 'R') continue; // ParameterStatus, BackendKeyData, notices
      const kind = m.body.readInt32BE(0);
      if (kind === 0) continue;
      if (kind === 3) {
        this.#socket.write(message('p', cstring(options.password)));
      } else if (kind === 5) {
        const inner = createHash('md5')
          .update(options.password + options.user)
          .digest('hex');
        const outer = createHash('md5').update(inner).update(m.body.subarray(4, 8)).digest('hex');
        this.#socket.write(message('p', cstring(`md5${outer}`)));
      } else if (kind === 10) {
        const mechanisms = m.body.toString('utf8', 4).split('\0');
        if (!mechanisms.includes('SCRAM-SHA-256'))
          throw new PgError(`no supported SASL mechanism in ${mechanisms}`);
        scram = new Scram(options.password);
        const first = Buffer.from(`n,,${scram.firstBare}`, 'utf8');
        const length = Buffer.alloc(4);
        length.writeInt32BE(first.length);
        this.#socket.write(message('p', Buffer.concat([cstring('SCRAM-SHA-256'), length, first])));
      } else if (kind === 11 && scram) {
        this.#socket.write(message('p', Buffer.from(scram.final(m.body.toString('utf8', 4)), 'utf8')));
      } else if (kind === 12 && scram) {
        scram.verify(m.body.toString('utf8', 4));
      } else {
        throw new PgError(`unsupported authentication request ${kind}`);
      }
    }
  }

  /** Runs one statement (simple query protocol) and returns its rows as text. */
  async query(sql: string): Promise<Row[]> {
    this.#socket.write(message('Q', cstring(sql)));
    let columns: string[] = [];
    const rows: Row[] = [];
    let failure: PgError | undefined;
    for (;;) {
      const m = await this.#next();
      if (m.type === 'T') {
        columns = [];
        let at = 2;
        for (let i = 0; i < m.body.readInt16BE(0); i++) {
          const end = m.body.indexOf(0, at);
          columns.push(m.body.toString('utf8', at, end));
          at = end + 1 + 18;
        }
      } else if (m.type === 'D') {
        const row: Row = {};
        let at = 2;
        for (let i = 0; i < m.body.readInt16BE(0); i++) {
          const length = m.body.readInt32BE(at);
          at += 4;
          row[columns[i] ?? String(i)] = length < 0 ? null : m.body.toString('utf8', at, at + length);
          at += Math.max(length, 0);
        }
        rows.push(row);
      } else if (m.type === 'E') {
        const { code, message: text } = errorFields(m.body);
        failure = new PgError(text, code);
      } else if (m.type === 'Z') {
        if (failure) throw failure;
        return rows;
      }
    }
  }

  close(): void {
    if (!this.#socket.destroyed) this.#socket.end(message('X', Buffer.alloc(0)));
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 5) {
      const length = this.#buffer.readInt32BE(1);
      if (this.#buffer.length < length + 1) return;
      const type = String.fromCharCode(this.#buffer[0] as number);
      this.#push({ type, body: this.#buffer.subarray(5, length + 1) });
      this.#buffer = this.#buffer.subarray(length + 1);
    }
  }

  #push(m: BackendMessage | Error): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting(m);
    else this.#queue.push(m);
  }

  async #next(): Promise<BackendMessage> {
    const queued = this.#queue.shift();
    const m =
      queued ??
      (await this.#within(
        new Promise<BackendMessage | Error>((resolve) => {
          this.#waiting = resolve;
        }),
        'answer',
      ));
    if (m instanceof Error) throw m;
    return m;
  }

  async #within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new PgError(`no ${what} within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Connects, runs one statement, closes. */
export async function pgQuery(options: PgConnectOptions, sql: string): Promise<Row[]> {
  const connection = await PgConnection.connect(options);
  try {
    return await connection.query(sql);
  } finally {
    connection.close();
  }
}
