#!/usr/bin/env node
// Entry point of the `keel` command: checks the Node version, then runs the compiled CLI shipped in dist/.
// Nothing that needs Node 24 (node:sqlite, type stripping) may be imported before the check: the CLI is loaded
// dynamically after it, so an older Node gets one line and exit code 2 instead of ERR_UNKNOWN_BUILTIN_MODULE.
// Plain JavaScript that any Node since 12 parses.

/** The oldest Node major version Keel runs on (package.json "engines"). */
const NODE_MAJOR_MIN = 24;

/** Why this Node cannot run Keel, or undefined when it can. */
function nodeVersionProblem(version, execPath) {
  const major = Number(String(version).split('.')[0]);
  if (Number.isInteger(major) && major >= NODE_MAJOR_MIN) return undefined;
  return (
    `keel: Node.js ${NODE_MAJOR_MIN} or newer is required, but this is Node ${version} (${execPath}) — ` +
    `install Node ${NODE_MAJOR_MIN} (e.g. nvm install ${NODE_MAJOR_MIN}) and run keel with it\n`
  );
}

const problem = nodeVersionProblem(process.versions.node, process.execPath);
if (problem !== undefined) {
  process.stderr.write(problem);
  process.exitCode = 2;
} else {
  import('../dist/cli/main.js').catch((error) => {
    // Only the CLI itself missing (a checkout without a build), not a module it imports.
    const missing =
      error &&
      error.code === 'ERR_MODULE_NOT_FOUND' &&
      String(error.message).includes("/dist/cli/main.js' imported from");
    process.stderr.write(
      missing
        ? 'keel: the compiled CLI (dist/) is missing — run `npm run build` in the keel package, or reinstall it\n'
        : `keel: ${error?.stack ? error.stack : String(error)}\n`,
    );
    process.exitCode = missing ? 2 : 1;
  });
}
