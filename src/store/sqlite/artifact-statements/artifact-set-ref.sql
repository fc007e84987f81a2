-- Params: :name, :sha256, :updated_at. Points a reference at a stored blob (last write wins); the foreign key
-- refuses a reference to a blob that is not stored.
INSERT INTO artifact_refs (name, sha256, updated_at) VALUES (:name, :sha256, :updated_at)
ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, updated_at = excluded.updated_at
