#!/usr/bin/env bash
# The test command of Strata, run by developers (README) and CI (.ci/run).
#
#   scripts/test.sh               ensure test dependencies, go vet ./..., go test -race ./...,
#                                 then every fuzz target for $STRATA_FUZZ_SECONDS (default 3) each
#   scripts/test.sh ./lsm/...     same, but go test only the given packages/flags
#
# Test dependencies: a MinIO server binary (built by scripts/minio.sh, cached in
# $STRATA_CACHE, default $HOME/.cache/strata/bin) and redis-server/redis-cli
# (installed with apt-get when missing, if running as root). Tests that need a
# missing dependency skip; under CI=true a missing dependency fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*"; }

# The tests build without the profile-guided optimization that `go build`
# applies to the strata binary (cmd/strata/default.pgo, scripts/pgo.sh): the
# profile changes what the compiler inlines, not what the code does, and
# with it every dependency of cmd/strata would be compiled twice more (for
# its test binary and the integration tests' builds), minutes on a fresh
# machine.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-pgo=off"

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
# process group (set -m) so an early exit can stop all of it, while go vet
# and the tests run. Tests that need MinIO wait for the status file
# (blobtest reads $STRATA_MINIO_STATUS); the others do not wait.
build_log=$(mktemp)
status_file=$(mktemp)
: >"$status_file"
STRATA_MINIO_BIN=$(scripts/minio.sh target)
export STRATA_MINIO_BIN STRATA_MINIO_STATUS=$status_file
log "scripts/minio.sh build (in the background) -> $STRATA_MINIO_BIN"
set -m
{
  if scripts/minio.sh build >"$build_log" 2>&1; then echo ok >"$status_file"; else echo failed >"$status_file"; fi
} &
build_pid=$!
set +m
trap 'kill -- "-$build_pid" 2>/dev/null || true; rm -f "$build_log" "$status_file"' EXIT

ensure_redis

log "go vet ./..."
go vet ./...
# The benchmark module (bench/: engine against Pebble, cmd/stratabench) is
# a module of its own: vet it and run its unit tests (-short skips the
# ones that start servers).
log "bench: go vet ./... && go test -short ./..."
(cd bench && go vet ./... && go test -short -run . ./cmd/...)
log "other dependencies ready (with go vet) in $(($(date +%s) - deps_start))s"

fuzz=false
if [ "$#" -eq 0 ]; then
  set -- ./...
  fuzz=true
fi
log "go test -race -timeout 25m $*"
test_status=0
go test -race -timeout 25m "$@" || test_status=$?

# Every fuzz target, a few seconds each (the full run only).
if [ "$fuzz" = true ]; then
  log "scripts/fuzz.sh ${STRATA_FUZZ_SECONDS:=3}"
  scripts/fuzz.sh "$STRATA_FUZZ_SECONDS" || test_status=1
fi

wait "$build_pid" || true
sed 's/^/    minio build: /' "$build_log"
if [ "$(cat "$status_file")" != ok ]; then
  missing "the MinIO build failed"
fi
exit "$test_status"
