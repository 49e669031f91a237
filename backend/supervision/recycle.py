"""The exit code of a planned restart: a child that exits with it asks to be started
again at once, and it is not a fault (``ManagedService`` restarts it without backoff and
without reporting "restarting"). The worker exits with it when it recycles itself while
idle (the rule: ``backend/temporal/loops/recycle_rule.py``)."""

RECYCLE_EXIT_CODE = 75  # EX_TEMPFAIL: "come back now", not a failure
