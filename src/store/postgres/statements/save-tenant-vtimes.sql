-- Records the new virtual times of the tenants a claim served (src/scheduling/fair-share.ts).
-- Params: :vtimes (JSON object: tenant id → virtual time). Returns nothing.
INSERT INTO fair_tenant_clocks (tenant_id, vtime)
SELECT key, value::double precision FROM jsonb_each_text(:vtimes::jsonb)
ON CONFLICT (tenant_id) DO UPDATE SET vtime = EXCLUDED.vtime
