// The registry of stable error codes: every typed error Keel raises or the API returns has one here,
// with its HTTP status and a one-line meaning. A test checks the codes are unique and documented.

export const ERROR_CODES = {
  // Input and API
  invalid_json: { status: 400, meaning: 'The request body is not valid JSON.' },
  validation_failed: { status: 400, meaning: 'The request does not match the documented schema.' },
  invalid_cursor: { status: 400, meaning: 'The pagination cursor is malformed or was not issued by this server.' },
  payload_too_large: { status: 413, meaning: 'The request body exceeds the configured payload limit.' },
  unsupported_media_type: { status: 415, meaning: 'The request body is not application/json.' },
  unauthorized: { status: 401, meaning: 'The API key is missing or not recognised.' },
  not_found: { status: 404, meaning: 'No such route.' },
  run_not_found: { status: 404, meaning: 'No run with this id belongs to the caller’s tenant.' },
  agent_not_found: { status: 404, meaning: 'No registered agent has this name (and version).' },
  idempotency_conflict: { status: 409, meaning: 'The idempotency key was used before with a different request body.' },
  run_terminal: { status: 409, meaning: 'The run has already finished.' },
  input_already_provided: { status: 409, meaning: 'A value was already posted for this input key.' },
  admin_disabled: { status: 404, meaning: 'Admin routes are disabled because KEEL_ADMIN_KEY is unset.' },
  // Run outcomes
  budget_exceeded: { status: 409, meaning: 'A run budget (steps, tokens, cost or deadline) was exhausted.' },
  non_determinism: { status: 500, meaning: 'Replay of the agent diverged from its journal.' },
  agent_error: { status: 500, meaning: 'The agent function threw.' },
  agent_version_unavailable: { status: 409, meaning: 'No worker serves the agent version the run is pinned to.' },
  input_timeout: { status: 408, meaning: 'No input arrived before the wait’s timeout.' },
  tool_input_invalid: { status: 400, meaning: 'Arguments given to a tool do not match its input schema.' },
  tool_failed: { status: 500, meaning: 'The tool threw.' },
  tool_timeout: { status: 504, meaning: 'A tool attempt exceeded its time limit.' },
  step_failed: { status: 500, meaning: 'A journaled step threw.' },
  child_failed: { status: 500, meaning: 'A child run ended without success.' },
  unknown_side_effect: { status: 409, meaning: 'A side-effect tool may or may not have run; an operator must decide.' },
  execution_not_unknown: { status: 409, meaning: 'Only executions in state unknown can be resolved.' },
  execution_not_found: { status: 404, meaning: 'No execution with this id belongs to the run.' },
  cancelled: { status: 409, meaning: 'The run was cancelled.' },
  model_not_found: { status: 400, meaning: 'The model name is not configured.' },
  model_unavailable: { status: 503, meaning: 'The model provider failed on every attempt.' },
  // --- Model gateway (issue 5) ---
  model_rate_limited: { status: 429, meaning: 'The model provider answered 429 (rate limited); retried while the retry budget allows.' },
  model_timeout: { status: 504, meaning: 'A model attempt or the whole model call exceeded its time limit.' },
  model_response_invalid: { status: 502, meaning: 'The model provider sent a body that could not be parsed or used.' },
  model_request_invalid: { status: 400, meaning: 'The model provider rejected the request as invalid (400/422); not retried.' },
  model_context_length_exceeded: { status: 400, meaning: 'The request is longer than the model’s context window; not retried.' },
  model_auth_failed: { status: 502, meaning: 'The model provider refused the configured credentials (401/403); not retried.' },
  model_endpoint_not_found: { status: 502, meaning: 'The model provider has no such model or path (404); not retried.' },
  model_request_too_large: { status: 400, meaning: 'A model call needs more tokens than a tokens-per-minute limit allows at all.' },
  model_version_unavailable: { status: 409, meaning: 'The run is pinned to a model version this process does not serve.' },
  provider_unavailable: { status: 503, meaning: 'Every endpoint of the model (and its fallbacks) has an open circuit breaker.' },
  // --- end model gateway ---
  // Engine and store
  stale_write: { status: 409, meaning: 'A commit was fenced off: the lease or the run state moved on.' },
  store_busy: { status: 503, meaning: 'The store is temporarily unavailable; retry.' },
  config_invalid: { status: 500, meaning: 'Keel’s configuration is invalid.' },
  already_running: { status: 500, meaning: 'Another Keel process owns this data directory.' },
  internal: { status: 500, meaning: 'An unexpected error; this is a bug.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
