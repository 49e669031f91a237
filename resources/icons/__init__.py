"""Icons shipped with the app (found through importlib.resources)."""
