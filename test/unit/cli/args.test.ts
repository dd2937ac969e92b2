import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS, parseArgs } from '../../../src/cli/args.ts';

describe('kubectl sampledb argument parsing', () => {
  it('parses each command with its flags and kubectl connection flags', () => {
    assert.deepEqual(parseArgs(['status', 'orders']), {
      kind: 'run',
      connection: {},
      run: { command: 'status', name: 'orders' },
    });
    assert.deepEqual(parseArgs(['backup', 'orders', '-n', 'shop', '--name=nightly-1']), {
      kind: 'run',
      connection: { namespace: 'shop' },
      run: { command: 'backup', name: 'orders', backupName: 'nightly-1' },
    });
    assert.deepEqual(
      parseArgs([
        '--kubeconfig',
        '/tmp/k',
        '--context=dev',
        'restore',
        'orders',
        '--backup',
        'b1',
        '--namespace=x',
      ]),
      {
        kind: 'run',
        connection: { kubeconfig: '/tmp/k', context: 'dev', namespace: 'x' },
        run: { command: 'restore', name: 'orders', backup: 'b1' },
      },
    );
    assert.deepEqual(parseArgs(['switchover', 'orders', '--to', 'orders-1']), {
      kind: 'run',
      connection: {},
      run: { command: 'switchover', name: 'orders', to: 'orders-1' },
    });
  });

  it('parses drill with its kind, schedule and name, and refuses a missing or unknown kind', () => {
    assert.deepEqual(parseArgs(['drill', 'orders', '--kind', 'kill-primary']), {
      kind: 'run',
      connection: {},
      run: { command: 'drill', name: 'orders', kind: 'kill-primary' },
    });
    assert.deepEqual(
      parseArgs(['drill', 'orders', '--kind=restore-check', '--schedule', '0 4 * * 1', '--name', 'weekly']),
      {
        kind: 'run',
        connection: {},
        run: {
          command: 'drill',
          name: 'orders',
          kind: 'restore-check',
          schedule: '0 4 * * 1',
          drillName: 'weekly',
        },
      },
    );
    const missing = parseArgs(['drill', 'orders']);
    assert.equal(missing.kind, 'error');
    assert.match(missing.kind === 'error' ? missing.message : '', /drill needs --kind/);
    const unknown = parseArgs(['drill', 'orders', '--kind', 'unplug']);
    assert.match(
      unknown.kind === 'error' ? unknown.message : '',
      /unknown drill kind "unplug".*kill-primary/,
    );
    assert.equal(parseArgs(['backup', 'orders', '--kind', 'x']).kind, 'error');
  });

  it('prints the usage, and each command its own help', () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const parsed = parseArgs(argv);
      assert.equal(parsed.kind, 'help');
      assert.match(parsed.kind === 'help' ? parsed.text : '', /Usage: kubectl sampledb <command>/);
    }
    for (const command of COMMANDS) {
      const parsed = parseArgs([command, '--help']);
      assert.equal(parsed.kind, 'help', command);
      assert.match(
        parsed.kind === 'help' ? parsed.text : '',
        new RegExp(`Usage: kubectl sampledb ${command} <name>`),
      );
      assert.match(parsed.kind === 'help' ? parsed.text : '', /--kubeconfig/);
    }
    const psql = parseArgs(['psql', '-h']);
    assert.match(psql.kind === 'help' ? psql.text : '', /port to the elected primary's pod/);
  });

  it('refuses bad command lines with a message and the relevant help', () => {
    const cases: Array<[string[], RegExp, RegExp]> = [
      [[], /no command given/, /Commands:/],
      [['drop', 'orders'], /unknown command "drop"/, /Commands:/],
      [['status'], /status needs the name of a SampleDB/, /Usage: kubectl sampledb status/],
      [['status', 'a', 'b'], /unexpected argument "b"/, /Usage: kubectl sampledb status/],
      [['restore', 'orders'], /restore needs --backup <backup>/, /Usage: kubectl sampledb restore/],
      [['switchover', 'orders'], /switchover needs --to <pod>/, /Usage: kubectl sampledb switchover/],
      [['switchover', 'orders', '--to'], /flag --to needs a value/, /Usage: kubectl sampledb switchover/],
      [['switchover', 'orders', '--to', '-n', 'x'], /flag --to needs a value/, /switchover/],
      [['status', 'orders', '--to', 'x'], /status has no flag --to/, /Usage: kubectl sampledb status/],
      [['status', 'orders', '--force'], /unknown flag --force/, /Usage: kubectl sampledb status/],
      [['backup', 'orders', '--name='], /flag --name needs a value/, /backup/],
    ];
    for (const [argv, message, help] of cases) {
      const parsed = parseArgs(argv);
      assert.equal(parsed.kind, 'error', argv.join(' '));
      if (parsed.kind !== 'error') continue;
      assert.match(parsed.message, message, argv.join(' '));
      assert.match(parsed.help, help, argv.join(' '));
    }
  });
});
