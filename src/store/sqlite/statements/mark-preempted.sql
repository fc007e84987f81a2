-- Records a preemption of the run, in the transaction of the commit that yielded it back to the queue: counts it,
-- stamps when, and keeps the lease token it ended, so the next claim (token + 1) measures the requeue delay.
-- Params: :id, :now.
UPDATE runs SET preemptions = preemptions + 1, preempted_at = :now, preempted_lease_token = lease_token WHERE id = :id
