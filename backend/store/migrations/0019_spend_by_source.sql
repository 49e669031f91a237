-- Spend per source (issue 31): what each configured source's jobs cost in model calls per
-- UTC day, so that no single job board may use more than its share of the day's ceiling
-- (``maxSourceShareOfDailyBudget``). A paid call of a job's stage is added here, in the
-- transaction that adds it to llm_spend, under the source that first found the job
-- (jobs.first_source). Integer micro-dollars, like llm_spend.
CREATE TABLE llm_spend_by_source (
    tenant_id       TEXT NOT NULL,
    day             TEXT NOT NULL,
    source          TEXT NOT NULL,
    calls           INTEGER NOT NULL DEFAULT 0,
    cost_micro_usd  INTEGER NOT NULL DEFAULT 0,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, day, source)
);
