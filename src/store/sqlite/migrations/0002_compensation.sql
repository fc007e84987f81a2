-- 0002: what a failed or cancelled run compensated (a JSON CompensationReport), for the run's final state, and
-- which worker (lease owner) wrote each journal entry, beside the fencing token it wrote it under.
ALTER TABLE runs ADD COLUMN compensation TEXT;
ALTER TABLE journal ADD COLUMN worker TEXT;
