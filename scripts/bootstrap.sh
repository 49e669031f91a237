#!/usr/bin/env bash
# Creates (or refreshes) the project's virtual environment in .venv.
# Sourced by scripts/run and scripts/test; reinstalls only when pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
extras="${JOBCTRL_EXTRAS:-}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "JobCtrl needs Python 3.11 or newer")'
  "$python" -m venv "$venv"
fi
stamp="$venv/.jobctrl-installed"
# sha256sum is GNU coreutils; macOS has shasum instead.
if command -v sha256sum >/dev/null; then digest=(sha256sum); else digest=(shasum -a 256); fi
want="$("${digest[@]}" < "$root/pyproject.toml" | cut -d' ' -f1)[$extras]"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  spec="$root"
  [ -n "$extras" ] && spec="$root[$extras]"
  "$venv/bin/python" -m pip install --quiet -e "$spec"
  echo "$want" > "$stamp"
fi
