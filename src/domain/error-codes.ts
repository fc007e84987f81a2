// The registry of stable error codes: every typed error Keel raises or the API returns has one
// here, with its HTTP status and a one-line meaning. A test checks the codes are unique and
// documented.

export const ERROR_CODES = {
  // Input and API
  invalid_json: { status: 400, meaning: 'The request body is not valid JSON.' },
  validation_failed: { status: 400, meaning: 'The request does not match the documented schema.' },
  invalid_cursor: {
    status: 400,
    meaning: 'The pagination cursor is malformed or was not issued by this server.',
  },
  batch_too_large: {
    status: 400,
    meaning: 'A POST /v1/runs:batch holds more runs than KEEL_BATCH_RUNS_MAX (or none).',
  },
  payload_too_large: {
    status: 413,
    meaning: 'The request body exceeds the configured payload limit.',
  },
  unsupported_media_type: { status: 415, meaning: 'The request body is not application/json.' },
  unauthorized: { status: 401, meaning: 'The API key is missing or not recognised.' },
  not_found: { status: 404, meaning: 'No such route.' },
  run_not_found: { status: 404, meaning: 'No run with this id belongs to the caller’s tenant.' },
  step_not_found: {
    status: 404,
    meaning: 'The run’s journal holds no step at this position (GET /v1/runs/:id/steps/:seq).',
  },
  agent_not_found: { status: 404, meaning: 'No registered agent has this name (and version).' },
  idempotency_conflict: {
    status: 409,
    meaning: 'The idempotency key was used before with a different request body.',
  },
  run_terminal: { status: 409, meaning: 'The run has already finished.' },
  run_not_terminal: {
    status: 409,
    meaning:
      'The run has not ended yet; a reset or a fork from a position needs an ended run (cancel it first).',
  },
  run_archived: {
    status: 409,
    meaning:
      'Retention archived the run’s history out of the live tables: it can be read, and rerun from its input, but not reset or forked from a position.',
  },
  reset_position_out_of_range: {
    status: 400,
    meaning: 'The reset position is past the last position of the run’s journal.',
  },
  reset_position_unsettled: {
    status: 409,
    meaning:
      'An effect at or before the reset position has no committed result to reuse (unfinished, unknown, waiting, never committed, or compensated); reset from an earlier position.',
  },
  input_already_provided: {
    status: 409,
    meaning: 'A value was already posted for this input key.',
  },
  tenant_not_found: { status: 404, meaning: 'No tenant has this id.' },
  tenant_queue_full: {
    status: 429,
    meaning:
      'The tenant has its maximum of queued runs already; retry after the Retry-After delay.',
  },
  deadline_unmeetable: {
    status: 429,
    meaning:
      'The run was submitted with whenLate: refuse and is expected to finish after its deadline at the agent’s measured completion rate; no run was created. Retry later, with a later deadline, or with whenLate: batch.',
  },
  budget_insufficient: {
    status: 429,
    meaning:
      'The run’s estimated model cost (the agent’s declared estimate, or the average of its recent successful runs) exceeds what is left of the tenant’s daily budget, and the agent admits such runs with whenOverBudget: refuse; no run was created. Retry once the budget renews (Retry-After) or is raised.',
  },
  admin_disabled: {
    status: 404,
    meaning: 'Admin routes are disabled because KEEL_ADMIN_KEY is unset.',
  },
  // Schedules (src/schedules)
  schedule_not_found: {
    status: 404,
    meaning: 'No schedule with this id belongs to the caller’s tenant.',
  },
  invalid_cron: {
    status: 400,
    meaning: 'The cron expression does not parse (5 or 6 fields, croner syntax) or never fires.',
  },
  invalid_time_zone: {
    status: 400,
    meaning: 'The time zone is not an IANA time zone name this server knows.',
  },
  webhook_not_allowed: {
    status: 400,
    meaning: 'The webhook URL’s origin is not on the tenant’s webhook allowlist.',
  },
  backfill_too_large: {
    status: 400,
    meaning: 'The backfill range holds more fires than one request may ask for.',
  },
  // Run outcomes
  budget_exceeded: {
    status: 409,
    meaning: 'A run budget (steps, tokens, cost or deadline) was exhausted.',
  },
  platform_cap_reached: {
    status: 429,
    meaning:
      'The platform-wide daily model token or cost cap (KEEL_PLATFORM_TOKEN_CAP_PER_DAY, KEEL_PLATFORM_COST_CAP_PER_DAY) is spent across all tenants: a direct gateway call fails with it, a run’s model call waits (platform_cap_reached) until midnight UTC.',
  },
  non_determinism: { status: 500, meaning: 'Replay of the agent diverged from its journal.' },
  checkpoint_unsettled: {
    status: 409,
    meaning:
      'ctx.checkpoint() was called while other ctx calls of the run were still pending (await them first).',
  },
  agent_error: { status: 500, meaning: 'The agent function threw.' },
  agent_input_invalid: {
    status: 400,
    meaning:
      'The run’s input does not match the input schema the agent declares (details.issues lists the zod issues); no run was created.',
  },
  agent_output_invalid: {
    status: 500,
    meaning:
      'The run’s result does not match the output schema the agent declares (details.issues lists the zod issues).',
  },
  internal_error: {
    status: 500,
    meaning:
      'Keel’s own code failed during an effect (a bug, not the provider’s answer nor the agent’s or tool’s code); details.correlationId finds the logged stack.',
  },
  agent_version_unavailable: {
    status: 409,
    meaning: 'No worker serves the agent version the run is pinned to.',
  },
  agent_version_not_served: {
    status: 409,
    meaning:
      'Queued runs can only be migrated to an agent version this process serves (its agents module exports it).',
  },
  input_timeout: { status: 408, meaning: 'No input arrived before the wait’s timeout.' },
  message_timeout: {
    status: 408,
    meaning: 'No message arrived on the channel before ctx.receive’s timeout.',
  },
  tool_input_invalid: {
    status: 400,
    meaning: 'Arguments given to a tool do not match its input schema.',
  },
  tool_failed: { status: 500, meaning: 'The tool threw.' },
  tool_timeout: { status: 504, meaning: 'A tool attempt exceeded its time limit.' },
  effect_stalled: {
    status: 504,
    meaning:
      'A tool attempt was aborted because its run stalled (onStall `retry-effect`); retried under the tool’s retry rules.',
  },
  run_stalled: {
    status: 500,
    meaning:
      'The run did not move (no ctx.progress, no effect started or ended) for its agent’s stallAfterMs; onStall `fail` ended it.',
  },
  progress_too_large: {
    status: 400,
    meaning: 'ctx.progress was given a state larger than its limit (16 KiB of JSON).',
  },
  admin_principal_exists: {
    status: 409,
    meaning:
      'A platform admin with this name exists already (names are unique, revoked ones included).',
  },
  admin_principal_not_found: { status: 404, meaning: 'No named platform admin has this id.' },
  admin_principal_revoked: {
    status: 401,
    meaning: 'The platform admin key belongs to a revoked principal.',
  },
  key_rate_limited: {
    status: 429,
    meaning:
      'The API key made more requests this minute than its limit (its requestsPerMinute, or KEEL_KEY_REQUESTS_PER_MINUTE) allows (counted across every API process on Postgres, per process on SQLite); retry after Retry-After seconds.',
  },
  retry_budget_exhausted: {
    status: 429,
    meaning: 'The run spent its retry budget, so a failed attempt was not retried.',
  },
  compensation_unavailable: {
    status: 500,
    meaning: 'A completed execution could not be compensated: its tool is not known to the worker.',
  },
  run_not_quarantined: {
    status: 409,
    meaning: 'Only a run quarantined as poison_run can be re-admitted.',
  },
  run_preempted: {
    status: 409,
    meaning:
      'The run is giving its slot back to interactive work at this effect boundary (agent code sees it; the run is re-queued with its journal).',
  },
  poison_run: {
    status: 500,
    meaning:
      'The run lost its lease repeatedly without progress and was quarantined; re-admit it after a fix.',
  },
  agent_blocked: {
    status: 500,
    meaning:
      'A turn of the agent’s code held its isolate longer than its limit without yielding (a loop); the watchdog ended the run.',
  },
  agent_oom: {
    status: 500,
    meaning: 'The agent’s code exceeded its isolate’s memory limit; the run was ended.',
  },
  agent_crashed: {
    status: 500,
    meaning:
      'The agent’s code ended its run from outside a turn: process.exit(), a throw in a callback, or its isolate died.',
  },
  tool_unavailable: {
    status: 500,
    meaning:
      'Agent code running in an isolate called a tool the main thread cannot find by name (define tools when the agents module loads, not inside agent code).',
  },
  durability_unavailable: {
    status: 500,
    meaning: 'The configured durability level cannot be provided by this store.',
  },
  step_failed: { status: 500, meaning: 'A journaled step threw.' },
  child_failed: { status: 500, meaning: 'A child run ended without success.' },
  fan_in_exhausted: {
    status: 500,
    meaning: 'No branch of ctx.any() succeeded and passed its verification.',
  },
  unknown_side_effect: {
    status: 409,
    meaning: 'A side-effect tool may or may not have run; an operator must decide.',
  },
  execution_not_unknown: {
    status: 409,
    meaning: 'Only executions in state unknown can be resolved.',
  },
  execution_not_found: { status: 404, meaning: 'No execution with this id belongs to the run.' },
  cancelled: { status: 409, meaning: 'The run was cancelled.' },
  model_not_found: { status: 400, meaning: 'The model name is not configured.' },
  model_unavailable: { status: 503, meaning: 'The model provider failed on every attempt.' },
  model_content_unsupported: {
    status: 400,
    meaning:
      'An SDK adapter (keel/ai-sdk, keel/openai-agents) was given content the model gateway does not carry: images, files, audio, hosted or provider-executed tools. Text, tool calls and tool results are carried.',
  },
  // Browser pool
  browser_unavailable: {
    status: 503,
    meaning:
      'No headless Chromium could be started on this node (KEEL_BROWSER_PATH missing or failing), or the node is stopping.',
  },
  browser_crashed: {
    status: 502,
    meaning:
      'Chromium died under the run’s browser session (killed, out of memory): the page is lost; the next browser action rebuilds the session from its saved storage state.',
  },
  browser_session_reclaimed: {
    status: 409,
    meaning:
      'The run’s browser session was reclaimed while an action ran in it (the run ended, was cancelled or lost its lease).',
  },
  browser_action_failed: {
    status: 422,
    meaning:
      'A browser action could not be done: the page did not load, no element matches the selector in time, or the URL is not http(s).',
  },
  // Sandbox
  sandbox_unavailable: {
    status: 503,
    meaning: 'The isolation tier a profile asks for is not installed or usable on this host.',
  },
  // Sandbox nodes (issue 24)
  node_exists: {
    status: 409,
    meaning: 'A sandbox node with this name exists already (POST /v1/admin/nodes).',
  },
  node_not_found: { status: 404, meaning: 'No sandbox node has this id (or it was removed).' },
  node_state_conflict: {
    status: 409,
    meaning: 'The sandbox node is in a state that cannot take this change (drain, undrain).',
  },
  node_token_invalid: {
    status: 401,
    meaning: 'The node token is missing, unknown or its node was removed (keel node --token).',
  },
  node_refused: {
    status: 503,
    meaning:
      'A sandbox node refused a call: it is at its capacity, draining or stopping; retryable elsewhere.',
  },
  node_lost: {
    status: 503,
    meaning:
      'The sandbox node running a call stopped answering mid-call: a read call runs again elsewhere, a side effect becomes unknown.',
  },
  nodes_unavailable: {
    status: 503,
    meaning:
      'No sandbox node accepted the call before its placement deadline (every candidate refused or none is registered); retryable.',
  },
  sandbox_tier_unsupported: {
    status: 400,
    meaning:
      'The sandbox tier cannot do what was asked of it (long-lived services run on namespace only).',
  },
  sandbox_network_unsupported: {
    status: 400,
    meaning: 'The tier cannot enforce the profile’s network allowlist.',
  },
  sandbox_failed: { status: 500, meaning: 'A sandbox could not be created, rebuilt or restored.' },
  sandbox_start_timeout: {
    status: 503,
    meaning:
      'A sandbox did not start (created and its workspace restored) within its profile’s `limits.startupMs`; the late environment is torn down. The tool call may be retried.',
  },
  image_not_built: {
    status: 503,
    meaning:
      'The profile’s environment image is not built yet and its build did not finish within the build wait (it goes on; retry later, or build it ahead with `keel images build`).',
  },
  image_build_failed: {
    status: 500,
    meaning:
      'Building an environment image failed (mmdebstrap, a package, a file or a setup command); the message carries the end of the build log.',
  },
  workspace_path_invalid: {
    status: 400,
    meaning: 'A workspace path is absolute, escapes the workspace or is not a regular file.',
  },
  workspace_limit: {
    status: 413,
    meaning:
      'A workspace file or the whole workspace exceeds its size limit, or the workspace holds more entries than the profile’s maxFiles.',
  },
  model_rate_limited: {
    status: 429,
    meaning:
      'The model provider answered 429 (rate limited); retried while the retry budget allows.',
  },
  model_timeout: {
    status: 504,
    meaning: 'A model attempt or the whole model call exceeded its time limit.',
  },
  model_response_invalid: {
    status: 502,
    meaning: 'The model provider sent a body that could not be parsed or used.',
  },
  model_request_invalid: {
    status: 400,
    meaning: 'The model provider rejected the request as invalid (400/422); not retried.',
  },
  model_context_length_exceeded: {
    status: 400,
    meaning: 'The request is longer than the model’s context window; not retried.',
  },
  model_auth_failed: {
    status: 502,
    meaning: 'The model provider refused the configured credentials (401/403); not retried.',
  },
  model_endpoint_not_found: {
    status: 502,
    meaning: 'The model provider has no such model or path (404); not retried.',
  },
  model_request_too_large: {
    status: 400,
    meaning: 'A model call needs more tokens than a tokens-per-minute limit allows at all.',
  },
  model_version_unavailable: {
    status: 409,
    meaning: 'The run is pinned to a model version this process does not serve.',
  },
  provider_unavailable: {
    status: 503,
    meaning: 'Every endpoint of the model (and its fallbacks) has an open circuit breaker.',
  },
  // Scheduling pools
  pool_queue_full: {
    status: 503,
    meaning:
      'An effect pool (a model, a sandbox profile, inline or a declared tool pool) has its maximum of queued effects; retried later.',
  },
  pool_slot_lease_lost: {
    status: 503,
    meaning:
      'This process’s lease on pool slots shared through the database expired (it could not renew within KEEL_POOL_LEASE_MS); it takes a new lease and asks again.',
  },
  pools_config_invalid: {
    status: 500,
    meaning:
      'The pools file (KEEL_POOLS_FILE) does not parse or does not match its schema; the previous pool configuration stays in force.',
  },
  // Engine and store
  stale_write: {
    status: 409,
    meaning: 'A commit was fenced off: the lease or the run state moved on.',
  },
  store_busy: { status: 503, meaning: 'The store is temporarily unavailable; retry.' },
  config_invalid: { status: 500, meaning: 'Keel’s configuration is invalid.' },
  already_running: { status: 500, meaning: 'Another Keel process owns this data directory.' },
  internal: { status: 500, meaning: 'An unexpected error; this is a bug.' },
  // HTTP requests refused before they reach a route
  malformed_request: {
    status: 400,
    meaning:
      'The request is not valid HTTP/1.1 (the HTTP parser refused it, e.g. a control character in a header).',
  },
  request_headers_too_large: {
    status: 431,
    meaning:
      'The request line and headers exceed the server’s limit (16 KiB by default); a long URL is the usual cause.',
  },
  request_timeout: { status: 408, meaning: 'The client did not send a complete request in time.' },
  expectation_failed: {
    status: 417,
    meaning:
      'The request has an Expect header other than 100-continue, the only expectation the server meets.',
  },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists but not with this method; the Allow header lists the methods it has.',
  },
  forbidden_key: {
    status: 400,
    meaning:
      'The JSON body has a __proto__ key or a constructor.prototype path, which Keel refuses anywhere in a body.',
  },
  tenant_name_taken: { status: 409, meaning: 'Another tenant has this name already.' },
  // API keys and scopes (issue 20)
  forbidden_scope: {
    status: 403,
    meaning:
      'The API key lacks the scope this route needs (submit, read, operate or admin), or asks to grant a scope it does not hold.',
  },
  key_expired: { status: 401, meaning: 'The API key has passed its expiry time.' },
  key_revoked: { status: 401, meaning: 'The API key was revoked.' },
  key_not_found: { status: 404, meaning: 'No API key with this id belongs to the tenant.' },
  delegated_token_invalid: {
    status: 401,
    meaning: 'The delegated token is malformed or was not signed by this deployment.',
  },
  delegated_token_expired: {
    status: 401,
    meaning: 'The delegated token has passed its expiry time.',
  },
  delegated_token_audience: {
    status: 401,
    meaning: 'The delegated token was minted for another API (KEEL_DELEGATION_AUDIENCE).',
  },
  delegated_token_revoked: {
    status: 401,
    meaning:
      'The run the delegated token speaks for has ended (or is gone): its tokens end with it.',
  },
  on_parent_end_refused: {
    status: 400,
    meaning:
      "onParentEnd is only for a child started with a delegated token, and only 'cancel' or 'detach': 'wait' is ctx.child's alone (a tool's child is unknown to the parent's replayed code, which cannot wait for it).",
  },
  delegated_forbidden: {
    status: 403,
    meaning:
      'A delegated token may only read its run, start child runs of it and read its shared space (as its scopes allow); this route is not among them.',
  },
  secret_not_found: { status: 404, meaning: 'No secret of this name belongs to the tenant.' },
  secret_exists: {
    status: 409,
    meaning: 'The tenant has a secret of this name already: rotate it instead of creating it.',
  },
  secret_conflict: {
    status: 409,
    meaning: 'Another rotation of the secret committed first; read its version and try again.',
  },
  secrets_unconfigured: {
    status: 409,
    meaning:
      'Secrets are used but no key-encryption key is configured (set KEEL_SECRETS_KEY to 32 random bytes, base64).',
  },
  secret_unreadable: {
    status: 500,
    meaning:
      'A stored secret could not be decrypted: the key-encryption key differs from the one that sealed it.',
  },
  secret_reference_invalid: {
    status: 400,
    meaning: 'A credential is configured as something other than `secret:NAME`.',
  },
  tool_arguments_too_large: {
    status: 413,
    meaning:
      'A tool call’s arguments exceed the tool’s size limit (details.limitBytes); refused before anything is journaled.',
  },
  result_too_large: {
    status: 413,
    meaning:
      'A run input, run output or effect result exceeds the largest stored payload (KEEL_PAYLOAD_STORED_MAX_BYTES, details.limitBytes): refused at the API, a failed effect or run in the engine.',
  },
  run_payloads_too_large: {
    status: 413,
    meaning:
      'The payloads a run references would exceed its total (KEEL_RUN_PAYLOAD_MAX_BYTES, details.limitBytes).',
  },
  payload_incomplete: {
    status: 503,
    meaning:
      'A large payload lost a chunk between its upload and its seal (collected meanwhile); the writer stores it again.',
  },
  payload_redacted: {
    status: 409,
    meaning:
      'The tenant has a redaction policy: a stored payload is served only through the redacted run and step views, never as raw bytes.',
  },
  payload_not_found: {
    status: 404,
    meaning:
      'The run references no stored payload with this sha256 (GET /v1/runs/:id/payloads/:sha256).',
  },
  sandbox_command_invalid: {
    status: 400,
    meaning:
      'A sandboxed command’s argv or environment holds a NUL byte or an invalid variable name, which no tier can pass on intact.',
  },
  // Tool policy and human approval
  tool_denied_by_policy: {
    status: 403,
    meaning:
      'The tenant’s or the agent’s tool policy denies this call (details.rule names the rule); returned to the agent as the tool’s error, the run goes on.',
  },
  tool_denied_by_approver: {
    status: 403,
    meaning:
      'A human denied the approval this call waited for; returned to the agent as the tool’s error.',
  },
  approval_expired: {
    status: 409,
    meaning:
      'The approval request expired before anyone decided: the call resolves as denied (returned to the agent as the tool’s error).',
  },
  approval_not_found: {
    status: 404,
    meaning: 'The run has no approval request for this execution id.',
  },
  approval_webhook_not_found: {
    status: 404,
    meaning: 'The tenant has no approver webhook (PUT /v1/approval-webhook sets one).',
  },
  approval_mismatch: {
    status: 409,
    meaning:
      'The decision named an argsHash other than the request’s: the call is not the one the approver saw.',
  },
  approval_already_decided: {
    status: 409,
    meaning: 'The approval request was approved, denied or expired already (details.status).',
  },
  // MCP (issue 19)
  mcp_server_unavailable: {
    status: 503,
    meaning:
      'An MCP server could not be reached, started or initialised (or dropped the session mid-call); retryable.',
  },
  mcp_server_not_found: {
    status: 404,
    meaning: 'No MCP server of this name is configured for the agent or its tenant.',
  },
  mcp_tool_not_found: {
    status: 404,
    meaning: 'The MCP server (as pinned for the run) lists no tool of this name.',
  },
  mcp_tool_error: {
    status: 502,
    meaning: 'The MCP tool answered with isError (details.content holds its answer).',
  },
  mcp_tools_changed: {
    status: 409,
    meaning:
      'The MCP server no longer lists a tool the run pinned with the same schema (details.pinnedHash, details.currentHash).',
  },
  mcp_origin_not_allowed: {
    status: 403,
    meaning:
      'A streamable-HTTP MCP server’s origin is not in the allowlist (KEEL_MCP_ALLOWED_ORIGINS).',
  },
  not_acceptable: {
    status: 406,
    meaning:
      'The Accept header excludes what the route answers with (POST /v1/mcp: both application/json and text/event-stream).',
  },
  mcp_config_invalid: {
    status: 400,
    meaning: 'An MCP server configuration does not match the documented schema.',
  },
  conflict: {
    status: 409,
    meaning:
      'A shared-space write expected another version of the file than the current one (details.currentVersion; 0: the file does not exist).',
  },
  shared_path_invalid: {
    status: 400,
    meaning:
      'A shared-space path is empty, too long, absolute, or holds an empty, "." or ".." segment, a control character or a backslash.',
  },
  shared_content_invalid: {
    status: 400,
    meaning: 'Shared-space file content is not a well-formed string.',
  },
  shared_version_invalid: {
    status: 400,
    meaning: 'A shared-space write’s expectedVersion is not null or a whole number from 0.',
  },
  shared_file_too_large: {
    status: 413,
    meaning: 'Shared-space file content exceeds its size limit (details.size, details.limit).',
  },
  shared_file_not_found: {
    status: 404,
    meaning: 'The run tree’s shared space holds no file at this path.',
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
