-- The fit evidence ledger behind every new score (null for scores made before it).
ALTER TABLE job_scores ADD COLUMN ledger_json TEXT;

-- Version 15 also has a data step, backend/store/data_migrations.py: a profile saved as
-- pasted text is structured into work entries once (the text itself is kept).

-- "Prepare anyway": the user asked for materials for this job although its fit is below
-- the threshold. A standing decision, so later re-evaluations keep honouring it.
ALTER TABLE jobs ADD COLUMN prepare_anyway_at TEXT;
