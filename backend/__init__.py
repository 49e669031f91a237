import sys

# httpx imports its command-line client (click, rich, pygments: a third of httpx's import
# time) whenever those happen to be installed, e.g. as another tool's dependency. No
# JobCtrl process runs that client; marking it absent makes httpx take its own fallback
# (a stub ``httpx.main``). Every process imports this package before httpx.
sys.modules.setdefault("httpx._main", None)
