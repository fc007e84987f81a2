-- Records a write Keel refused on purpose. Params: :run_id, :at, :kind, :data.
INSERT INTO audit (run_id, at, kind, data) VALUES (:run_id, :at, :kind, :data)
