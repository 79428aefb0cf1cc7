// What a bundle can send to DynamoDB, read from esbuild's metafile: the independent side of the IAM check.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Metafile {
  inputs: Record<string, { bytes: number; imports: Array<{ path: string }> }>;
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, { bytesInOutput: number }> }>;
}

/** DocumentClient commands (lib-dynamodb) and the DynamoDB action each one sends. */
const DOCUMENT_COMMANDS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  Query: 'Query',
  Scan: 'Scan',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
  ExecuteStatement: 'ExecuteStatement',
  BatchExecuteStatement: 'BatchExecuteStatement',
  ExecuteTransaction: 'ExecuteTransaction',
};
const SDK_SOURCE = /node_modules\/@(aws-sdk|smithy)\//;
const SDK_IMPORT = /(?:import|export)\s*(?:type\s+)?\{([^}]*)\}\s*from\s*['"]@aws-sdk\/(client|lib)-dynamodb['"]/g;
const COMMAND_FILE = /node_modules\/@aws-sdk\/(client|lib)-dynamodb\/dist-es\/commands\/(\w+)Command\.js$/;

/** The output esbuild wrote for an entry point (`functions/set.ts`). */
export function outputFor(metafile: Metafile, entryPoint: string) {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint === entryPoint);
  if (!output) throw new Error(`no bundle for ${entryPoint} in the metafile`);
  return output;
}

/** Source files that contributed code to the bundle (tree-shaken ones contribute 0 bytes). */
export function bundledInputs(metafile: Metafile, entryPoint: string): string[] {
  return Object.entries(outputFor(metafile, entryPoint).inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([file]) => file);
}

/**
 * The DynamoDB actions a bundle can send: each `...Command` that code in it (ours or a library's such as Powertools,
 * never the SDK's own paginators or endpoint discovery) imports from client-dynamodb or lib-dynamodb, counted only if
 * the command's class survived tree-shaking. Per module: a bundled module's unused command still counts.
 */
export function dynamodbActionsOf(metafile: Metafile, entryPoint: string, root: string): string[] {
  const bundled = bundledInputs(metafile, entryPoint);
  const survivors = new Set(
    bundled.flatMap((file) => {
      const match = COMMAND_FILE.exec(file);
      return match ? [`${match[1]}:${match[2]}`] : [];
    }),
  );
  const actions = new Set<string>();
  for (const file of bundled) {
    if (SDK_SOURCE.test(file) || file.startsWith('(disabled)')) continue;
    for (const [, names, pkg] of readFileSync(join(root, file), 'utf8').matchAll(SDK_IMPORT)) {
      for (const spec of (names as string).split(',')) {
        const name = spec.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0] ?? '';
        const command = /^(\w+)Command$/.exec(name)?.[1];
        if (command === undefined || !survivors.has(`${pkg}:${command}`)) continue;
        actions.add(`dynamodb:${pkg === 'lib' ? (DOCUMENT_COMMANDS[command] ?? command) : command}`);
      }
    }
  }
  return [...actions].sort();
}
