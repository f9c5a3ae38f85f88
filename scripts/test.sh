#!/usr/bin/env bash
# Runs every check CI runs: formatting, clippy (warnings denied), Rust tests, Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# One full build: incremental caches would double the build's disk use and save nothing.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
PROFILE=dev bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps -q
cargo test --locked --workspace
.venv/bin/python -m pytest -q python/tests
