-- Params: :name. Returns sha256, or nothing.
SELECT sha256 FROM artifact_refs WHERE name = :name
