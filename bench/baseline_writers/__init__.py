"""The résumé and letter writers as they were before the faithful-materials rework
(commit 03be8f6: tailor, cover, resume_source and the flat documents), kept only as the
baseline of bench/materials_pipeline.py. Not used by the app."""
