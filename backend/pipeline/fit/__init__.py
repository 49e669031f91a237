"""Fit scoring as an evidence ledger: the posting's requirements (``requirements``), the
profile's evidence for each (``evidence``), title families and seniority (``titles``),
places and work arrangements (``places``), the skill synonym index (``synonyms``) and
the offline ledger with its deal-breaker caps (``rules``). Plain functions: no I/O
beyond reading the bundled synonym file once, no database, no Temporal.
"""
