// The architecture, enforced: `npm test` runs `depcruise` with these rules and fails on any violation.
// Layers, bottom up: domain (shared vocabulary, errors) ← store ← planes (engine, api, ...) ← cli.
// Unit tests beside the code (*.test.ts) may reach test/support; they are otherwise held to their module's rules.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle makes load order matter and hides which module owns what.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-the-floor',
      severity: 'error',
      comment: 'src/domain holds the vocabulary every plane shares; it imports no plane.',
      from: { path: '^src/domain/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'store-imports-only-domain',
      severity: 'error',
      comment:
        'The store is below every plane: it imports src/domain and itself, nothing else from src.',
      from: { path: '^src/store/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(domain|store)/' },
    },
    {
      name: 'lower-planes-never-import-the-engine',
      severity: 'error',
      comment:
        'store, sdk, planner, models, sandbox and telemetry are used by the engine, never the reverse.',
      from: { path: '^src/(store|sdk|planner|models|sandbox|telemetry)/' },
      to: { path: '^src/engine/' },
    },
    {
      name: 'sdk-never-imports-store-or-api',
      severity: 'error',
      comment:
        'Agent code loads the SDK; the SDK must not drag the store, Postgres or the HTTP server into it.',
      from: { path: '^src/sdk/' },
      to: { path: '^src/(store|api)/' },
    },
    {
      name: 'adapters-import-only-sdk-and-domain',
      severity: 'error',
      comment:
        'The SDK adapters (keel/ai-sdk, keel/openai-agents) run inside agent code: like any agent, they reach the engine only through ctx.',
      from: { path: '^src/adapters/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(adapters|sdk|domain)/' },
    },
    {
      name: 'planner-imports-only-domain',
      severity: 'error',
      comment:
        'The planner is pure arithmetic over the domain: usable from the CLI, the API and the docs alike.',
      from: { path: '^src/planner/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(domain|planner)/' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      comment:
        'The CLI is the top: it wires the planes together; no plane depends on it. keel/embedded (src/embedded) is the other top: it starts the same runtime inside an application.',
      from: { path: '^src/', pathNot: '^src/(cli|embedded)/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'client-is-browser-safe',
      severity: 'error',
      comment:
        'keel/client runs in browsers (the dashboard) and applications: it imports itself and the pure backoff arithmetic, no Node module and no other plane.',
      from: { path: '^src/client/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(client/|domain/backoff\\.ts$)' },
    },
    {
      name: 'client-imports-no-node-module',
      severity: 'error',
      comment: 'A node: import would break the dashboard bundle and browser applications.',
      from: { path: '^src/client/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'src-never-imports-tests',
      severity: 'error',
      comment: 'Shipped code must not depend on test helpers (tests beside the code may).',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
  },
};
