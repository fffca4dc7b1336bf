#!/usr/bin/env bash
# Writes cmd/strata/default.pgo, the CPU profile that `go build` uses for
# profile-guided optimization of the strata binary (Go's -pgo=auto: a
# default.pgo in the main package's directory). The profile is the server
# under redis-benchmark's matrix of commands (the one `stratabench matrix`
# runs: SET GET INCR LPUSH LPOP SADD HSET ZADD LRANGE_100 MSET, unpipelined
# and -P 16), once with appendfsync always and once everysec, each server
# on a fresh local directory; the two CPU profiles are merged.
#
#   scripts/pgo.sh            about 2 minutes on 2 cores
#
# Environment: PGO_SECONDS, the seconds profiled per mode (default 50);
# PGO_OUT, the file written (default cmd/strata/default.pgo); STRATA_BIN, a
# strata binary to profile instead of building one (the tests' own).
#
# Regenerate it when the hot paths change a lot; a stale profile only
# loses some of the gain (the compiler ignores what no longer matches).
# Needs redis-benchmark (scripts/test.sh installs redis-tools).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-benchmark >/dev/null || { echo "pgo.sh: redis-benchmark not found (apt-get install redis-tools)" >&2; exit 1; }
work=$(mktemp -d)
bin=$work/strata
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
secs=${PGO_SECONDS:-50}
out=${PGO_OUT:-cmd/strata/default.pgo}

# The profile is taken of a build without one, so that it describes the
# code as written rather than as a previous profile shaped it.
if [ -n "${STRATA_BIN:-}" ]; then
  bin=$STRATA_BIN
else
  go build -pgo=off -o "$bin" ./cmd/strata
fi
# shellcheck source=ports.sh
. scripts/ports.sh
rport=$(free_port)
mport=$(free_port)

profile() { # profile MODE OUT
  local dir=$work/data.$1
  mkdir -p "$dir"
  "$bin" server --dir "$dir" --port "$rport" --appendfsync "$1" --metrics-addr "127.0.0.1:$mport" >"$work/log.$1" 2>&1 &
  pids+=($!)
  local srv=$!
  for _ in $(seq 100); do port_taken "$rport" && break; sleep 0.1; done
  curl -fsS -o "$2" "http://127.0.0.1:$mport/debug/pprof/profile?seconds=$secs" &
  local cp=$!
  sleep 0.5
  local end=$((SECONDS + secs - 1))
  while [ $SECONDS -lt $end ]; do
    for p in 1 16; do
      for t in set get incr lpush lpop sadd hset zadd lrange_100 mset; do
        [ $SECONDS -lt $end ] || break 2
        redis-benchmark -p "$rport" -c 50 -n 20000 -r 100000 -P "$p" -t "$t" -q >/dev/null
      done
    done
  done
  wait "$cp"
  kill "$srv"
  wait "$srv" 2>/dev/null || true
}

profile always "$work/always.pprof"
profile everysec "$work/everysec.pprof"
go tool pprof -proto "$work/always.pprof" "$work/everysec.pprof" >"$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
