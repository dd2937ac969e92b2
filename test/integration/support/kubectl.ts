// kubectl against a test control plane that throws on a non-zero exit, with stderr in the message.
import type { KubectlResult } from '../../../src/envtest/index.ts';

export interface KubectlRunner {
  kubectl(args: readonly string[], options?: { input?: string }): Promise<KubectlResult>;
}

export function strictKubectl(plane: () => KubectlRunner) {
  return async (args: string[], input?: string): Promise<string> => {
    const result = await plane().kubectl(args, input === undefined ? {} : { input });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
}
