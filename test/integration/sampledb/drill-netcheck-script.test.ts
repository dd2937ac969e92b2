// isolate-primary's enforcement check as its Job runs it, against a real PostgreSQL: a server it can reach answers,
// so the check reports that nothing enforces NetworkPolicy (the run is refused); a port where connections go
// unanswered (a listener that never speaks, as a dropped SYN looks to the client, and a closed port, as a rejecting
// policy looks) is reported as enforced once three attempts in a row went unanswered.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  DRILL_NETCHECK_SCRIPT,
  netcheckScriptEnv,
  parseNetcheckResult,
} from '../../../src/sampledb/scripts/drill-netcheck.ts';
import { findPostgresBinDir, type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';

const skip = findPostgresBinDir() ? false : 'PostgreSQL is not installed';

describe('the NetworkPolicy enforcement check against real PostgreSQL', { skip, timeout: 120_000 }, () => {
  let pg: PostgresServer;
  let silent: Server;
  let silentPort = 0;
  const sockets = new Set<Socket>();
  const check = async (port: number, seconds: number) => {
    const env = {
      ...netcheckScriptEnv({ host: '127.0.0.1', port, seconds, terminationLog: '/dev/null' }),
      PATH: pg.path,
    };
    const run = await runScript(DRILL_NETCHECK_SCRIPT, env, 60_000);
    assert.equal(run.code, 0, run.stderr);
    const result = parseNetcheckResult(run.stdout);
    assert.ok(result, `a result line: ${run.stdout}`);
    return result;
  };

  before(async () => {
    pg = await startPostgres();
    // Accepts the TCP connection and never answers: pg_isready times out as it does behind a dropping policy.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  after(async () => {
    // close() waits for open connections, and this listener never ends one itself.
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent?.close(() => resolve()));
    await pg?.stop();
  });

  it('a server that answers: not enforced, every attempt answered', async () => {
    const result = await check(pg.port, 3);
    assert.equal(result.enforced, false);
    assert.ok(result.answered >= 2, JSON.stringify(result));
    assert.equal(result.unanswered, 0);
  });

  it('connections that go unanswered: enforced after three in a row', async () => {
    const dropped = await check(silentPort, 30);
    assert.deepEqual(dropped, { enforced: true, answered: 0, unanswered: 3 });
    const closed = await check(pg.port === 1 ? 2 : 1, 30);
    assert.deepEqual(closed, { enforced: true, answered: 0, unanswered: 3 });
  });

  it('a malformed report is no result', () => {
    assert.equal(parseNetcheckResult('{"enforced":"yes","answered":1,"unanswered":0}'), undefined);
    assert.equal(parseNetcheckResult('no json'), undefined);
  });
});
