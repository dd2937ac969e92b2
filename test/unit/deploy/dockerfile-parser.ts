// A small Dockerfile reader for the tests of its rules (no hadolint here): stages, instructions, exec-form arrays.

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** Joins continuation lines, drops comments and the parser directive, splits at FROM. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  const stages: { from: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    const args = match[2] ?? '';
    if (keyword === 'FROM') {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ from: from?.[1] ?? args, name: from?.[2], instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword, args });
    }
  }
  return stages;
}

/** `["a", "b"]` → ['a', 'b']. */
export function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
    throw new Error(`not an exec-form array: ${args}`);
  }
  return parsed;
}

export function instructionsOf(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

export interface Copy {
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly destination: string;
}

export function copiesOf(stage: Stage): Copy[] {
  return instructionsOf(stage, 'COPY').map(({ args }) => {
    const words = args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
  });
}
