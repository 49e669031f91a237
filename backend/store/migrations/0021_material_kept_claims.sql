-- The claims a user kept in their own edit of a résumé or letter: the truthfulness gate
-- named them (the profile does not hold them) and the user answered "Keep it — I can back
-- this up". A JSON list of {"claim", "why"} on the user's generation; NULL for a writer's
-- generation and for an edit the gate had nothing to say about.
ALTER TABLE job_materials ADD COLUMN kept_claims_json TEXT;
