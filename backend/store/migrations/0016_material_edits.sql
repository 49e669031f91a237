-- Why the last writer's output was refused: the claim the truthfulness gate could not find
-- in the profile (the job detail says it). One row per job and kind, replaced each time.
CREATE TABLE material_rejections (
    tenant_id    TEXT NOT NULL,
    job_id       TEXT NOT NULL REFERENCES jobs (job_id),
    kind         TEXT NOT NULL,                  -- resume | cover_letter
    error_code   TEXT NOT NULL,
    claim        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (job_id, kind)
);
