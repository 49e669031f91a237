"""The worker's background loops: the reconcile pass and what it calls (recovered history,
budget resume, interrupted preparations, threshold backstop, auto-apply), the heartbeat
and the history repair. They run in the worker process next to its Temporal worker and
start work only through ``backend.temporal.dispatch``.
"""
