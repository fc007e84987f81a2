-- 0054: a fair claim pass in one round trip (issue 24). keel_fair_claim does in the database what claims.ts did over
-- six round trips (begin, fair-window, claim-allocation-runs, save-tenant-vtimes, insert-attempts, commit): lock the
-- window of backlogged tenants with the least virtual times (FOR UPDATE SKIP LOCKED, as fair-window), plan over them
-- exactly as src/domain/fair-share.ts' FairClaim does (allocateClaims in rounds, a short tenant dropped and its slots
-- re-planned, at most FAIR_CLAIM_ROUNDS_MAX rounds), claim each round's allocation (as claim-allocation-runs), start
-- the attempts (as insert-attempts), save the served tenants' virtual times and clear the mark of the window's
-- tenants found short or without room (as unflag-fair-tenants). Called as one statement, it is its own transaction:
-- the window stays locked only while it runs. The planner's constants (INTERACTIVE_LEAD_CLAIMS 64, rounds 4) are
-- repeated below; test/fair-claim-function-postgres.test.ts holds them, and the plans, equal to fair-share.ts'.
--
-- Durability: the claim commits with synchronous_commit off, as claims did before (the write queue's lease-only
-- transactions): see the comment on FAIR_CLAIM in src/store/procedure-store.ts for why and where that is safe.
CREATE FUNCTION keel_fair_claim(
  p_owner text, p_now bigint, p_lease_expires_at bigint, p_served text[], p_statuses text[], p_limit int,
  p_window int, p_backlog_weight double precision, p_batch_aging_ms bigint
) RETURNS SETOF runs LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  window_ids text[] := '{}';  -- every tenant locked, open or not
  ids text[] := '{}';         -- the open ones (claimable runs and room): FairClaim's tenants
  weights double precision[] := '{}';
  vtimes double precision[] := '{}';
  rooms double precision[] := '{}';
  head_keys double precision[] := '{}';
  interactive boolean[] := '{}';
  active boolean[] := '{}';   -- still backlogged: no round found it short
  served boolean[] := '{}';
  n int := 0;
  clock double precision;
  slots int := p_limit;
  rounds int := 0;
  total_weight double precision;
  lead double precision;
  starts double precision[];
  taken int[];
  in_heap boolean[];
  pick_t int[];
  pick_f double precision[];
  best int;
  bk double precision;
  bf double precision;
  cand_key double precision;
  cand_finish double precision;
  alloc_t text[];
  alloc_n int[];
  got_ids text[];
  got_tenants text[];
  got_count int[];
  got_seen int[];
  claimed text[] := '{}';
  i int;
  j int;
  cap double precision;
  hi double precision;
  hb double precision;
  r record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR r IN
    WITH picked AS (
      SELECT tenant_id, vtime FROM fair_tenant_clocks WHERE backlogged
      ORDER BY vtime, tenant_id LIMIT p_window
      FOR UPDATE SKIP LOCKED
    )
    SELECT p.tenant_id, coalesce(t.weight, 1)::double precision AS weight, p.vtime, t.max_concurrent_runs,
      CASE WHEN t.max_concurrent_runs IS NULL THEN 0 ELSE (
        SELECT count(*) FROM runs x
        WHERE x.tenant_id = p.tenant_id AND x.ended_at IS NULL AND x.status IN ('running', 'cancelling')
          AND x.lease_owner IS NOT NULL
      ) END AS held,
      (SELECT q.claim_after FROM runs q
        WHERE q.tenant_id = p.tenant_id AND q.priority_rank = 0 AND q.claim_after IS NOT NULL AND q.claim_after <= p_now
          AND q.status = ANY (p_statuses) AND q.agent_key = ANY (p_served)
          AND q.lease_losses = 0 AND q.lease_owner IS NULL
        ORDER BY q.claim_after LIMIT 1) AS head_interactive,
      (SELECT q.claim_after FROM runs q
        WHERE q.tenant_id = p.tenant_id AND q.priority_rank = 1 AND q.claim_after IS NOT NULL AND q.claim_after <= p_now
          AND q.status = ANY (p_statuses) AND q.agent_key = ANY (p_served)
          AND q.lease_losses = 0 AND q.lease_owner IS NULL
        ORDER BY q.claim_after LIMIT 1) AS head_batch
    FROM picked p LEFT JOIN LATERAL (
      SELECT x.weight, x.max_concurrent_runs FROM tenants x WHERE x.id = p.tenant_id LIMIT 1
    ) t ON true
  LOOP
    -- toBackloggedTenants (src/store/fair-claim.ts): open when it has a claimable head and room under its cap.
    window_ids := window_ids || r.tenant_id;
    CONTINUE WHEN r.head_interactive IS NULL AND r.head_batch IS NULL;
    cap := CASE WHEN r.max_concurrent_runs IS NULL THEN 'Infinity'::double precision ELSE r.max_concurrent_runs END;
    CONTINUE WHEN cap - r.held <= 0;
    hi := coalesce(r.head_interactive::double precision, 'Infinity');
    hb := coalesce(r.head_batch::double precision + p_batch_aging_ms, 'Infinity');
    n := n + 1;
    ids := ids || r.tenant_id;
    weights := weights || r.weight;
    vtimes := vtimes || r.vtime;
    rooms := rooms || (cap - r.held);
    head_keys := head_keys || least(hi, hb);
    interactive := interactive || (hi <= hb);
    active := active || true;
    served := served || false;
  END LOOP;
  IF n = 0 THEN
    IF cardinality(window_ids) > 0 THEN
      UPDATE fair_tenant_clocks SET backlogged = false WHERE tenant_id = ANY (window_ids);
    END IF;
    RETURN;
  END IF;
  -- The clock: the least virtual time of every backlogged tenant (locked or not), lifted to the window's least.
  SELECT coalesce(min(c.vtime), 0) INTO clock FROM fair_tenant_clocks c WHERE c.backlogged;
  SELECT greatest(clock, min(v.x)) INTO clock FROM unnest(vtimes) AS v(x);
  WHILE slots > 0 AND rounds < 4 AND true = ANY (active) LOOP
    rounds := rounds + 1;
    -- allocateClaims: start-time fair queuing over the tenants still backlogged, one pick at a time.
    total_weight := 0;
    FOR i IN 1..n LOOP
      IF active[i] AND rooms[i] > 0 AND weights[i] > 0 THEN total_weight := total_weight + weights[i]; END IF;
    END LOOP;
    EXIT WHEN total_weight = 0;
    lead := 64 / greatest(p_backlog_weight, total_weight);
    starts := '{}'; taken := '{}'; in_heap := '{}';
    FOR i IN 1..n LOOP
      starts := starts || greatest(vtimes[i], clock);
      taken := taken || 0;
      in_heap := in_heap || (active[i] AND rooms[i] > 0 AND weights[i] > 0);
    END LOOP;
    pick_t := '{}'; pick_f := '{}';
    WHILE cardinality(pick_t) < slots LOOP
      best := NULL;
      FOR i IN 1..n LOOP
        CONTINUE WHEN NOT in_heap[i];
        cand_key := CASE WHEN taken[i] = 0 AND interactive[i] THEN starts[i] - lead ELSE starts[i] END;
        cand_finish := starts[i] + 1 / weights[i];
        IF best IS NULL OR cand_key < bk OR (cand_key = bk AND (cand_finish < bf OR (cand_finish = bf
            AND (head_keys[i] < head_keys[best]
              OR (head_keys[i] = head_keys[best] AND ids[i] COLLATE "C" < ids[best] COLLATE "C"))))) THEN
          best := i; bk := cand_key; bf := cand_finish;
        END IF;
      END LOOP;
      EXIT WHEN best IS NULL;
      pick_t := pick_t || best;
      pick_f := pick_f || bf;
      taken[best] := taken[best] + 1;
      starts[best] := bf;
      IF taken[best] >= rooms[best] THEN in_heap[best] := false; END IF;
    END LOOP;
    EXIT WHEN cardinality(pick_t) = 0;
    alloc_t := '{}'; alloc_n := '{}';
    FOR i IN 1..n LOOP
      IF taken[i] > 0 THEN alloc_t := alloc_t || ids[i]; alloc_n := alloc_n || taken[i]; END IF;
    END LOOP;
    -- The round's claim: claim-allocation-runs.sql with the attempts started (insert-attempts.sql) in the same
    -- statement. Claimed rows come back per tenant in claim order (claimedByTenant in src/store/fair-claim.ts).
    WITH allocation AS (
      SELECT * FROM unnest(alloc_t, alloc_n) AS a(tenant_id, n)
    ),
    candidates AS (
      SELECT p.id FROM allocation a CROSS JOIN LATERAL (
        (SELECT q.id, q.due_at AS k FROM runs q
          WHERE q.tenant_id = a.tenant_id AND q.priority_rank = 0 AND q.claim_after IS NOT NULL AND q.claim_after <= p_now
            AND q.status = ANY (p_statuses) AND q.agent_key = ANY (p_served)
            AND q.lease_losses = 0 AND q.lease_owner IS NULL
          ORDER BY q.due_at LIMIT a.n)
        UNION ALL
        (SELECT q.id, q.due_at + p_batch_aging_ms AS k FROM runs q
          WHERE q.tenant_id = a.tenant_id AND q.priority_rank = 1 AND q.claim_after IS NOT NULL AND q.claim_after <= p_now
            AND q.status = ANY (p_statuses) AND q.agent_key = ANY (p_served)
            AND q.lease_losses = 0 AND q.lease_owner IS NULL
          ORDER BY q.due_at LIMIT a.n)
        ORDER BY k LIMIT a.n
      ) p
    ),
    picked AS (
      SELECT q.id FROM runs q
      WHERE q.id IN (SELECT c.id FROM candidates c) AND q.claim_after <= p_now AND q.lease_losses = 0
        AND q.lease_owner IS NULL AND q.status = ANY (p_statuses)
      FOR UPDATE SKIP LOCKED
    ),
    done AS (
      UPDATE runs u SET
        status = CASE u.status WHEN 'cancelling' THEN 'cancelling' ELSE 'running' END,
        lease_losses = u.lease_losses + (CASE WHEN u.lease_owner IS NULL THEN 0 ELSE 1 END),
        lease_loss_owners = CASE WHEN u.lease_owner IS NULL THEN u.lease_loss_owners
          ELSE (coalesce(u.lease_loss_owners, '[]')::jsonb || to_jsonb(u.lease_owner))::text END,
        lease_owner = p_owner,
        lease_token = u.lease_token + 1,
        attempts = u.attempts + 1,
        lease_expires_at = p_lease_expires_at,
        claim_after = p_lease_expires_at,
        state_version = u.state_version + 1,
        waiting_reason = NULL,
        waiting_since = NULL,
        wake_at = NULL,
        updated_at = p_now
      FROM picked WHERE u.id = picked.id
      RETURNING u.id, u.tenant_id, u.due_at + u.priority_rank * p_batch_aging_ms AS k, u.attempts, u.lease_owner,
        u.lease_token
    ),
    started AS (
      INSERT INTO run_attempts (run_id, number, worker, lease_token, started_at, ended_at, ending)
      SELECT d.id, d.attempts, d.lease_owner, d.lease_token, p_now, NULL, 'running' FROM done d
    )
    SELECT coalesce(array_agg(d.id ORDER BY d.tenant_id, d.k, d.id COLLATE "C"), '{}'),
      coalesce(array_agg(d.tenant_id ORDER BY d.tenant_id, d.k, d.id COLLATE "C"), '{}')
    INTO got_ids, got_tenants FROM done d;
    -- FairClaim.record: the i-th pick of a tenant is filled by its i-th claimed run.
    got_count := array_fill(0, ARRAY[n]);
    FOR j IN 1..cardinality(got_tenants) LOOP
      i := array_position(ids, got_tenants[j]);
      got_count[i] := got_count[i] + 1;
    END LOOP;
    got_seen := array_fill(0, ARRAY[n]);
    FOR j IN 1..cardinality(pick_t) LOOP
      i := pick_t[j];
      got_seen[i] := got_seen[i] + 1;
      CONTINUE WHEN got_seen[i] > got_count[i];
      vtimes[i] := pick_f[j];
      rooms[i] := rooms[i] - 1;
      interactive[i] := false;
      served[i] := true;
      claimed := claimed || got_ids[array_position(got_tenants, ids[i]) + got_seen[i] - 1];
      slots := slots - 1;
    END LOOP;
    FOR i IN 1..n LOOP
      IF taken[i] > got_count[i] THEN active[i] := false; END IF;
    END LOOP;
  END LOOP;
  -- One indexed update per tenant served (few: a claim's runs' worth), then the mark of those found short.
  FOR i IN 1..n LOOP
    IF served[i] THEN UPDATE fair_tenant_clocks SET vtime = vtimes[i] WHERE tenant_id = ids[i]; END IF;
    IF active[i] THEN window_ids := array_remove(window_ids, ids[i]); END IF;
  END LOOP;
  IF cardinality(window_ids) > 0 THEN
    UPDATE fair_tenant_clocks SET backlogged = false WHERE tenant_id = ANY (window_ids);
  END IF;
  RETURN QUERY SELECT q.* FROM runs q WHERE q.id = ANY (claimed) ORDER BY array_position(claimed, q.id);
END
$$;
