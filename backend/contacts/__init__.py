"""Contact & Outreach: supervised contact research for one job.

Pure domain code (no I/O, no Temporal): the source-access policy (``policy``), the
documents research may read and the candidates it finds (``model``), the offline
heuristic extractor and the model prompt / parser (``extract``)."""
