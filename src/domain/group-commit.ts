// The one bound on group commit that the configuration and the stores share: how many writes may
// ever share one store transaction, so that one fsync never waits behind an unbounded batch.

/**
 * Most writes one store transaction takes (KEEL_GROUP_COMMIT_MAX_BATCH may lower it; the Postgres
 * store caps at 512).
 */
export const GROUP_COMMIT_MAX_BATCH_LIMIT = 1024;
