#!/usr/bin/env bash
# The main job on a fresh machine: set everything up, then run the demo (3 parties as separate
# processes on 127.0.0.1 over mutual TLS). Extra arguments go to `veil demo` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=release bash scripts/setup.sh
exec target/release/veil demo "$@"
