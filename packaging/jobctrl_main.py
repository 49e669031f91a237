"""The frozen app's entry point: ``jobctrl [desktop|serve|worker|api]``.

PyInstaller runs this file as ``__main__``; it only hands over to ``backend.cli`` so that
every module (workflows included: the Temporal sandbox re-imports them by name) lives in
an importable package, never in the frozen ``__main__``.
"""

import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()  # first, before anything can start a child
    from backend.cli import main

    main()
