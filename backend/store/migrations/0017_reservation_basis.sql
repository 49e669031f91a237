-- What each spend reservation was admitted under (provider and model), and re-admissions.
-- A stage about to call another model than the one its run was admitted under (the user
-- switched from the free offline model to a paid one mid-run) reserves that call under the
-- new model first: one more row, keyed by run, job, stage and model, whose parent_run_id
-- names the run it belongs to. Released with the run. NULL provider: admitted before the
-- basis was recorded (unknown, so a paid call re-admits).
ALTER TABLE llm_spend_reservations ADD COLUMN provider TEXT;
ALTER TABLE llm_spend_reservations ADD COLUMN model TEXT;
ALTER TABLE llm_spend_reservations ADD COLUMN parent_run_id TEXT;
CREATE INDEX llm_spend_reservations_parent ON llm_spend_reservations (tenant_id, parent_run_id);
