// What a bundle can send to DynamoDB, read from esbuild's metafile: the independent side of the IAM check.
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

export interface Metafile {
  inputs: Record<string, { bytes: number; imports: Array<{ path: string }> }>;
  outputs: Record<
    string,
    {
      entryPoint?: string;
      inputs: Record<string, { bytesInOutput: number }>;
      imports?: Array<{ path: string; kind: string; external?: boolean }>;
    }
  >;
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

/**
 * The lazy modules a bundle loads with import() (scripts/bundle.mjs): `./lazy/<name>.mjs` next to it, each an output of
 * its own in the metafile. Paths as the metafile names outputs (relative to the root).
 */
export function lazyOutputsOf(metafile: Metafile, entryPoint: string): string[] {
  const [path] = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === entryPoint) ?? [];
  if (path === undefined) throw new Error(`no bundle for ${entryPoint} in the metafile`);
  const lazy = (outputFor(metafile, entryPoint).imports ?? [])
    .filter((i) => i.external && i.kind === 'dynamic-import' && i.path.startsWith('./lazy/'))
    .map((i) => posix.join(posix.dirname(path), i.path));
  for (const file of lazy)
    if (!metafile.outputs[file]) throw new Error(`${path} imports ${file}, which the build did not write`);
  return [...new Set(lazy)];
}

/** Source files that contributed code to the bundle or to a lazy module it loads (tree-shaken ones contribute 0 bytes). */
export function bundledInputs(metafile: Metafile, entryPoint: string): string[] {
  const outputs = [
    outputFor(metafile, entryPoint),
    ...lazyOutputsOf(metafile, entryPoint).map((file) => metafile.outputs[file]!),
  ];
  const files = outputs.flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file),
  );
  return [...new Set(files)];
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
    // Virtual modules (`namespace:path`, such as what a lazy module takes from its loader) are no files to read.
    if (SDK_SOURCE.test(file) || file.startsWith('(disabled)') || /^[\w-]+:/.test(file)) continue;
    for (const [, names, pkg] of readFileSync(join(root, file), 'utf8').matchAll(SDK_IMPORT)) {
      for (const spec of (names as string).split(',')) {
        const name =
          spec
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0] ?? '';
        const command = /^(\w+)Command$/.exec(name)?.[1];
        if (command === undefined || !survivors.has(`${pkg}:${command}`)) continue;
        actions.add(`dynamodb:${pkg === 'lib' ? (DOCUMENT_COMMANDS[command] ?? command) : command}`);
      }
    }
  }
  return [...actions].sort();
}
