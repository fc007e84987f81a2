-- 0035: egress allowlists per tenant and per run (issue 18). Each narrows the sandbox profile's `network.allow`: a
-- connection leaves only when the profile, the tenant's list and the run's list all allow it (a list can only take
-- away). egress_allow: JSON array [{ "host": "api.example.com" | "*.suffix" | IP, "port": 443 }, ...]; NULL: no list
-- (narrows nothing); []: no destination at all. tenants.egress_allow is set through the admin API (PATCH
-- /v1/admin/tenants/:id `egressAllow`); runs.egress_allow is given when the run is created and never changes.
ALTER TABLE tenants ADD COLUMN egress_allow TEXT;
ALTER TABLE runs ADD COLUMN egress_allow TEXT;
