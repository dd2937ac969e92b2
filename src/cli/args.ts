// Argument parsing of `kubectl sampledb`: argv → one command with its flags, or the help to print, or an error.
// Pure (no cluster, no process), so every command line is unit-tested.
import { DRILL_KINDS, type DrillKind } from '../api/sampledb-drill.ts';

export const COMMANDS = ['status', 'backup', 'restore', 'switchover', 'psql', 'drill'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** How to reach the cluster, as kubectl spells it. */
export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export type Command =
  | { command: 'status'; name: string }
  | { command: 'backup'; name: string; backupName?: string }
  | { command: 'restore'; name: string; backup: string }
  | { command: 'switchover'; name: string; to: string }
  | { command: 'psql'; name: string }
  | { command: 'drill'; name: string; kind: DrillKind; schedule?: string; drillName?: string };

export type Parsed =
  | { kind: 'help'; text: string }
  | { kind: 'error'; message: string; help: string }
  | { kind: 'run'; connection: ConnectionFlags; run: Command };

const CONNECTION_HELP = `Connection flags (as kubectl):
  --kubeconfig <file>   kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config)
  --context <name>      kubeconfig context to use (default: the current context)
  -n, --namespace <ns>  namespace of the SampleDB (default: the context's namespace, then "default")
  -h, --help            this help`;

export const USAGE = `kubectl sampledb: operate SampleDB databases (sampledb.io/v1alpha1).

Usage: kubectl sampledb <command> <name> [flags]

Commands:
  status <name>                       phase, version, instances and roles, last backup, conditions
  backup <name> [--name <backup>]     take a backup now (creates a SampleDBBackup)
  restore <name> --backup <backup>    restore a Completed backup in place (creates a SampleDBRestore)
  switchover <name> --to <pod>        hand the primary over to a replica (sets ${'sampledb.io/switchover-to'})
  psql <name>                         psql through a port-forward, with the binding Secret
  drill <name> --kind <kind>          run a resilience drill (creates a SampleDBDrill)

Run "kubectl sampledb <command> --help" for a command's help.

${CONNECTION_HELP}`;

const COMMAND_HELP: Record<CommandName, string> = {
  status: `Usage: kubectl sampledb status <name> [flags]

Shows one SampleDB in one view: phase, requested and running PostgreSQL version, the instances with their roles
and readiness (from status.replication, when the operator reports it), the endpoint, the last completed backup and
every condition with its reason and message.`,
  backup: `Usage: kubectl sampledb backup <name> [--name <backup>] [flags]

Creates a SampleDBBackup of the SampleDB <name> and prints its name. The operator queues it behind any backup of
the same database that is running. Follow it with: kubectl get sampledbbackup <backup> -w

Flags:
  --name <backup>   name of the SampleDBBackup (default: generated, "<name>-" and a random suffix)`,
  restore: `Usage: kubectl sampledb restore <name> --backup <backup> [flags]

Creates a SampleDBRestore that restores the SampleDBBackup <backup> into the SampleDB <name> in place (the
operator stops client writes, takes a safety backup, restores, and resumes writes). The backup must belong to
that SampleDB and be Completed. Follow it with: kubectl get sampledbrestore <restore> -w

Flags:
  --backup <backup>   the SampleDBBackup to restore (required)`,
  switchover: `Usage: kubectl sampledb switchover <name> --to <pod> [flags]

Asks the operator for a clean switchover: sets the annotation sampledb.io/switchover-to=<pod> on the SampleDB.
The pod must be one of its instances (see "kubectl sampledb status <name>"); the operator refuses, with a
condition and an Event, a target that is not a ready, streaming replica.

Flags:
  --to <pod>   the replica pod to promote (required)`,
  psql: `Usage: kubectl sampledb psql <name> [flags]

Runs psql (from PATH, or $PSQL) against the SampleDB: forwards a local port to the elected primary's pod
(status.replication.primary, else <name>-0) and passes the binding Secret's (status.binding.name) username,
database and password to psql in PGUSER, PGDATABASE and PGPASSWORD (the password is never printed or put on a
command line). Needs get on the SampleDB and the Secret and create on pods/portforward.`,
  drill: `Usage: kubectl sampledb drill <name> --kind <kind> [--schedule "<cron>"] [--name <drill>] [flags]

Creates a SampleDBDrill against the SampleDB <name> and prints its name. Without --schedule the drill runs once,
now; with it, on that cron schedule (UTC). The operator runs it only in a namespace labelled
sampledb.io/drills=allowed, and refuses it (with the reason in its status and an Event) while the SampleDB is not
Ready or a backup, upgrade, restore or another drill runs, or when the fault would leave no healthy instance.
Follow it with: kubectl get sampledbdrill <drill> -o wide -w

Kinds:
  kill-primary           delete the primary pod (instances >= 2); measures detection, writes back, canary, replicas
  kill-replica           delete a replica pod (instances >= 2)
  kill-operator-leader   delete the operator pod holding the leader Lease (leader election on)
  restore-check          restore the latest Completed backup into a throw-away SampleDB, check it is Ready, delete it
  fill-disk              fill the primary's data volume for 30 s with a ballast file a Job on its node removes
                         (instances >= 2); refused when the volume is shared with the node (larger than its claim)
  isolate-primary        cut the primary off with a NetworkPolicy until another is elected (instances >= 2);
                         refused when a check pod shows the cluster does not enforce NetworkPolicy

Flags:
  --kind <kind>          the fault (required)
  --schedule "<cron>"    five-field cron schedule or macro, e.g. "0 4 * * 1" (default: run once)
  --name <drill>         name of the SampleDBDrill (default: generated, "<name>-<kind>-" and a random suffix)`,
};

export function commandHelp(command: CommandName): string {
  return `${COMMAND_HELP[command]}\n\n${CONNECTION_HELP}`;
}

const VALUE_FLAGS: Record<string, string> = {
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
  '-n': 'namespace',
  '--namespace': 'namespace',
  '--name': 'name',
  '--backup': 'backup',
  '--to': 'to',
  '--kind': 'kind',
  '--schedule': 'schedule',
};

const COMMAND_FLAGS: Record<CommandName, readonly string[]> = {
  status: [],
  backup: ['name'],
  restore: ['backup'],
  switchover: ['to'],
  psql: [],
  drill: ['kind', 'schedule', 'name'],
};

/** Parses the arguments after `kubectl sampledb` (kubectl passes them unchanged to the plugin). */
export function parseArgs(argv: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  let help = false;
  const fail = (message: string, command?: CommandName): Parsed => ({
    kind: 'error',
    message,
    help: command ? commandHelp(command) : USAGE,
  });
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help' || arg === 'help') {
      if (arg === 'help' && positional.length > 0) positional.push(arg);
      else help = true;
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const flag = eq > 0 ? arg.slice(0, eq) : arg;
      const key = VALUE_FLAGS[flag];
      if (!key) return fail(`unknown flag ${flag}`, commandOf(positional));
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '' || (eq < 0 && value.startsWith('-')))
        return fail(`flag ${flag} needs a value`, commandOf(positional));
      flags[key] = value;
      continue;
    }
    positional.push(arg);
  }
  const [commandArg, name, ...rest] = positional;
  if (commandArg === undefined) return help ? { kind: 'help', text: USAGE } : fail('no command given');
  if (!isCommand(commandArg)) return fail(`unknown command "${commandArg}"`);
  const command = commandArg;
  if (help) return { kind: 'help', text: commandHelp(command) };
  if (name === undefined) return fail(`${command} needs the name of a SampleDB`, command);
  if (rest.length > 0) return fail(`unexpected argument "${rest[0]}"`, command);
  for (const key of Object.keys(flags)) {
    if (['kubeconfig', 'context', 'namespace'].includes(key)) continue;
    if (!COMMAND_FLAGS[command].includes(key)) return fail(`${command} has no flag --${key}`, command);
  }
  const connection: ConnectionFlags = {};
  if (flags.kubeconfig) connection.kubeconfig = flags.kubeconfig;
  if (flags.context) connection.context = flags.context;
  if (flags.namespace) connection.namespace = flags.namespace;
  const run = (c: Command): Parsed => ({ kind: 'run', connection, run: c });
  switch (command) {
    case 'status':
    case 'psql':
      return run({ command, name });
    case 'backup':
      return run(flags.name ? { command, name, backupName: flags.name } : { command, name });
    case 'restore':
      if (!flags.backup) return fail('restore needs --backup <backup>', command);
      return run({ command, name, backup: flags.backup });
    case 'switchover':
      if (!flags.to) return fail('switchover needs --to <pod>', command);
      return run({ command, name, to: flags.to });
    case 'drill': {
      const kind = DRILL_KINDS.find((k) => k === flags.kind);
      if (!flags.kind) return fail('drill needs --kind <kind>', command);
      if (!kind)
        return fail(`unknown drill kind "${flags.kind}" (kinds: ${DRILL_KINDS.join(', ')})`, command);
      return run({
        command,
        name,
        kind,
        ...(flags.schedule ? { schedule: flags.schedule } : {}),
        ...(flags.name ? { drillName: flags.name } : {}),
      });
    }
  }
}

function isCommand(value: string): value is CommandName {
  return (COMMANDS as readonly string[]).includes(value);
}

function commandOf(positional: readonly string[]): CommandName | undefined {
  const first = positional[0];
  return first !== undefined && isCommand(first) ? first : undefined;
}
