-- Word files beside the PDFs, and the applicant-tracking-system check of each résumé file.
-- job_artifacts.kind gains resume_docx and cover_letter_docx (pages is 0 for them: Word lays
-- out its own pages). ats_check_json is the check of a résumé file read back by the
-- importer and as plain text: {"ok": bool, "missing": ["the dates of 'Analyst at Shopify'
-- (PDF, plain text)", ...]}; NULL for letters and for files rendered before the check.
ALTER TABLE job_artifacts ADD COLUMN ats_check_json TEXT;
