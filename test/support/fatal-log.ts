/** The `fatal` line of an operator process's JSON log (pino, one object a line), if it wrote one. */
export function fatalLine(stdout: string): { level: string; msg: string; err?: string } | undefined {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: string; msg: string; err?: string })
    .find((l) => l.level === 'fatal');
}
