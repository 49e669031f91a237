"""What each process JobCtrl starts does for itself, below both the supervisor that
launches it and the api / worker it runs: give freed heap back to the OS (``heap_trim``),
tell the supervisor it is ready (``ready_signal``), and read the worker's readiness from
its heartbeats (``readiness``). Nothing here imports supervision/, api/ or temporal/."""
