#!/usr/bin/env bash
# The test command of Strata, run by developers (README) and CI (.ci/run).
#
#   scripts/test.sh               ensure test dependencies, go vet ./..., go test -race ./...
#   scripts/test.sh ./lsm/...     same, but go test only the given packages/flags
#
# Test dependencies: a MinIO server binary (built by scripts/minio.sh, cached in
# $STRATA_CACHE, default $HOME/.cache/strata/bin) and redis-server/redis-cli
# (installed with apt-get when missing, if running as root). Tests that need a
# missing dependency skip; under CI=true a missing dependency fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*"; }

missing() {
  if [ "${CI:-}" = true ]; then
    log "error: $1 (CI=true: every test dependency is required)"
    exit 1
  fi
  log "warning: $1; the tests that need it will skip"
}

ensure_redis() {
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    log "redis: $(redis-server --version | head -n 1)"
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "apt-get install -y redis-server redis-tools"
    export DEBIAN_FRONTEND=noninteractive
    # A fresh container has no package lists: update only when install fails.
    apt-get install -y -q redis-server redis-tools >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && apt-get install -y -q redis-server redis-tools >/dev/null; } ||
      true
  fi
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    log "redis: $(redis-server --version | head -n 1)"
  else
    missing "redis-server/redis-cli not found (install redis-server and redis-tools)"
  fi
}

command -v go >/dev/null || { log "error: go is not on PATH"; exit 1; }
deps_start=$(date +%s)

# The MinIO build takes minutes cold: run it in the background, in its own
# process group (set -m) so an early exit can stop all of it.
build_log=$(mktemp)
log "scripts/minio.sh build (in the background)"
set -m
scripts/minio.sh build >"$build_log" 2>&1 &
build_pid=$!
set +m
trap 'kill -- "-$build_pid" 2>/dev/null || true; rm -f "$build_log"' EXIT

ensure_redis

log "go vet ./..."
go vet ./...

log "waiting for the MinIO build"
if wait "$build_pid"; then
  sed 's/^/    /' "$build_log"
  STRATA_MINIO_BIN=$(tail -n 1 "$build_log")
  export STRATA_MINIO_BIN
  log "minio: $STRATA_MINIO_BIN"
else
  sed 's/^/    /' "$build_log"
  missing "the MinIO build failed"
fi
log "dependencies ready (with go vet) in $(($(date +%s) - deps_start))s"

if [ "$#" -eq 0 ]; then
  set -- ./...
fi
log "go test -race -timeout 25m $*"
go test -race -timeout 25m "$@"
