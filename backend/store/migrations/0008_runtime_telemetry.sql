-- Runtime telemetry on worker heartbeats: bounded, privacy-safe active-work detail,
-- completed-activity duration summaries and approximate Temporal task-queue observations.
-- Every column is written by the worker on each beat; NULL telemetry_schema means the row
-- carries no (or no valid) telemetry and the capacity reader must not trust its detail.

ALTER TABLE worker_runtime_heartbeats ADD COLUMN telemetry_schema INTEGER;
ALTER TABLE worker_runtime_heartbeats ADD COLUMN active_items_json TEXT;        -- oldest first, <= 20
ALTER TABLE worker_runtime_heartbeats ADD COLUMN active_items_total INTEGER;    -- exact allowlisted count
ALTER TABLE worker_runtime_heartbeats ADD COLUMN active_items_truncated INTEGER; -- 0 | 1
ALTER TABLE worker_runtime_heartbeats ADD COLUMN stage_counts_json TEXT;        -- {stage: exact count}
ALTER TABLE worker_runtime_heartbeats ADD COLUMN duration_summaries_json TEXT;  -- {activityType: summary}
ALTER TABLE worker_runtime_heartbeats ADD COLUMN task_queue_json TEXT;          -- {taskQueue: observation}

CREATE INDEX worker_heartbeats_identity
    ON worker_runtime_heartbeats (tenant_id, database_path, app_dir, heartbeat_at);
