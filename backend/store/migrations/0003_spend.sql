-- The LLM spend ledger: one UPSERTed row per tenant, UTC day, provider and model.
-- Cost is an estimate from per-family rates, in integer micro-dollars.

CREATE TABLE llm_spend (
    tenant_id       TEXT NOT NULL,
    day             TEXT NOT NULL,                     -- 'YYYY-MM-DD', UTC
    provider        TEXT NOT NULL,
    model           TEXT NOT NULL,
    calls           INTEGER NOT NULL DEFAULT 0,
    input_tokens    INTEGER NOT NULL DEFAULT 0,
    output_tokens   INTEGER NOT NULL DEFAULT 0,
    cost_micro_usd  INTEGER NOT NULL DEFAULT 0,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, day, provider, model)
);
