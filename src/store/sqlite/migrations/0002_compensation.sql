-- 0002: what a failed or cancelled run compensated (a JSON CompensationReport), for the run's final state, and
-- which worker (lease owner) wrote each journal entry, beside the fencing token it wrote it under; and the poison
-- counter: leases of a run lost (expired, never released) since its last commit, and the owners that lost them.
ALTER TABLE runs ADD COLUMN compensation TEXT;
ALTER TABLE journal ADD COLUMN worker TEXT;
ALTER TABLE runs ADD COLUMN lease_losses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_loss_owners TEXT;
