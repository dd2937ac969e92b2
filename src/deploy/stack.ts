// Pulumi.yaml's `main`: the language host imports this module and runs its default export.
import { stackProgram } from './program.ts';

export default stackProgram;
