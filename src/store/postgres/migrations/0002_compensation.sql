-- 0002: what a failed or cancelled run compensated (a JSON CompensationReport), for the run's final state.
ALTER TABLE runs ADD COLUMN compensation text;
