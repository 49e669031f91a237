"""Process supervision: start, watch, restart and stop the local services (the embedded
Temporal dev server, the worker and the API), their ports, readiness and private files.

Nothing here runs inside a workflow or touches job data beyond the health rows it reads;
the worker's own background loops live in :mod:`backend.temporal.loops`.
"""
