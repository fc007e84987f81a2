-- 0037: a child run started through the API with its parent's delegated token (issue 20) ends with its parent like a
-- ctx.child child. on_parent_end: 'cancel' (the parent's end cancels it, in the same transaction) or 'detach'; NULL
-- for a top-level run and for a ctx.child child, whose policy its parent's journal holds. Given when the run is
-- created and never changes; runs_parent_run_id (0031) finds a parent's children.
ALTER TABLE runs ADD COLUMN on_parent_end TEXT;
