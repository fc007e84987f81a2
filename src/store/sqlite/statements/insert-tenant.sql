-- Creates a tenant with its quotas (NULL limits are unlimited).
-- Params: :id, :name, :weight, :max_concurrent_runs, :max_queued_runs, :now. Returns nothing.
-- Fails on a duplicate name (UNIQUE constraint).
INSERT INTO tenants (id, name, weight, max_concurrent_runs, max_queued_runs, created_at, updated_at)
VALUES (:id, :name, :weight, :max_concurrent_runs, :max_queued_runs, :now, :now)
