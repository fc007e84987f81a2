// Recognises the agents module that fails to load because Node reads it as CommonJS: a project made
// by `npm init` declares "type": "commonjs", under which a .ts (or .js) file with `import` does not
// parse. Finds the package.json that decides the module's format and names the one-line fix. Reads
// files only; never writes the user's package.json.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Messages (and codes) Node gives when ES module syntax meets a module it treats as CommonJS. */
const COMMONJS_SIGNS = [
  /Cannot use import statement outside a module/,
  /Unexpected token 'export'/,
  /ERR_REQUIRE_ESM/,
  /require\(\) of ES Module/,
  /Failed to load the ES module/,
];

export interface PackageScope {
  /** The package.json that decides the module's format, or undefined when there is none. */
  path: string | undefined;
  /** Its "type" field as written (undefined: none). */
  type: string | undefined;
}

/** The nearest package.json above `file`, and its "type": what makes a .ts/.js file ESM or CJS. */
export function packageScopeOf(file: string): PackageScope {
  for (let dir = dirname(file); ; ) {
    const path = join(dir, 'package.json');
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      try {
        const type = (JSON.parse(text) as { type?: unknown }).type;
        return { path, type: typeof type === 'string' ? type : undefined };
      } catch {
        return { path, type: undefined };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return { path: undefined, type: undefined };
    dir = parent;
  }
}

/**
 * When `error` is Node refusing ES module syntax in a module its package makes CommonJS: what is
 * wrong and the fix, for a StartupError. Undefined for any other failure.
 */
export function commonJsHint(
  error: unknown,
  file: string,
): { problem: string; fix: string } | undefined {
  const text =
    error instanceof Error
      ? `${(error as { code?: unknown }).code ?? ''} ${error.message}`
      : String(error);
  if (!COMMONJS_SIGNS.some((sign) => sign.test(text))) return undefined;
  const scope = packageScopeOf(file);
  if (scope.type === 'module') return undefined;
  const fix = `Keel agents modules are ES modules: add "type": "module" to ${scope.path ?? `a package.json beside it (${join(dirname(file), 'package.json')})`}, e.g. { "type": "module", "engines": { "node": ">=24" } } (keel init makes such a project)`;
  const problem =
    scope.path === undefined
      ? 'it uses import/export, but no package.json says the project is an ES module, so Node reads it as CommonJS'
      : `it uses import/export, but ${scope.path} ${scope.type === undefined ? 'has no "type"' : `says "type": "${scope.type}"`}, so Node reads it as CommonJS`;
  return { problem, fix };
}
