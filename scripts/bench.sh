#!/usr/bin/env bash
# Engine benchmarks: Strata (lsm on the durable local-disk bucket) against
# Pebble (fsynced WAL), both in temp directories on the same disk. Runs the
# separate module in bench/ (Pebble never enters the main go.mod) and prints
# one table: benchmark, metric, strata, pebble, strata/pebble.
#
#   scripts/bench.sh                 default run (about 3-4 minutes on 2 cores); every
#                                    benchmark runs 3 times and the table shows medians
#   scripts/bench.sh quick           a smoke run (about a minute), numbers are rough
#   scripts/bench.sh official        the official numbers: longer runs, 1 GiB recovery
#                                    (about 8 minutes)
#   scripts/bench.sh default 'Get|Scan'   only benchmarks matching the regexp
#
# BenchmarkCompaction (Strata only) loads COMPACTION_KEYS keys plus 30%
# overwrites with an in-process compactor and runs once in every mode: quick
# 1M keys (about 15 s on an idle 2-core machine), default 2M (about 30 s),
# official 10M (about 3 minutes, on top of the 8 above).
#
# Environment: BENCHTIME, COUNT, RECOVERY_BYTES, GET_KEYS, COMPACTION_KEYS
# override the mode's values; BENCH_OUT names the raw `go test -bench` output
# file (default: a temp file, path printed at the end). TMPDIR decides the
# disk the databases live on.
set -euo pipefail
cd "$(dirname "$0")/../bench"

mode=${1:-default}
filter=${2:-.}
case "$mode" in
  quick)    benchtime=300ms; count=1; recovery=$((64 << 20)); keys=50000;  ckeys=1000000 ;;
  default)  benchtime=1s;    count=3; recovery=$((256 << 20)); keys=200000; ckeys=2000000 ;;
  official) benchtime=3s;    count=5; recovery=$((1 << 30)); keys=200000; ckeys=10000000 ;;
  *) echo "usage: $0 [quick|default|official] [regexp]" >&2; exit 2 ;;
esac
benchtime=${BENCHTIME:-$benchtime}
count=${COUNT:-$count}
recovery=${RECOVERY_BYTES:-$recovery}
keys=${GET_KEYS:-$keys}
ckeys=${COMPACTION_KEYS:-$ckeys}

work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${BENCH_OUT:-$(mktemp "${TMPDIR:-/tmp}/strata-bench-out.XXXXXX")}
: >"$out"

log() { printf '==> %s\n' "$*" >&2; }

log "building bench.test and benchtable"
go test -c -o "$work/bench.test" .
go build -o "$work/benchtable" ./cmd/benchtable

# run BENCH-REGEXP BENCHTIME [COUNT]: one pass of the test binary; lines go
# to the raw output file and, for progress, to stderr. A failing pass is
# reported and the others still run; the script then exits 1 after the table.
failed=0
run() {
  local re=$1 bt=$2 n=${3:-$count}
  if ! grep -Eq "$filter" <<<"$re"; then
    return
  fi
  log "go test -bench '$re' -benchtime $bt -count $n"
  "$work/bench.test" -test.run '^$' -test.bench "$re" -test.benchtime "$bt" \
    -test.count "$n" -test.timeout 60m \
    -get.keys "$keys" -recovery.bytes "$recovery" \
    -compaction.keys "$ckeys" | tee -a "$out" >&2 ||
    { failed=1; log "FAILED: $re (see the output above)"; }
}

start=$(date +%s)
run '^BenchmarkFill$' "$benchtime"
run '^BenchmarkGet$' "$benchtime"
run '^BenchmarkScan$' "$benchtime"
run '^BenchmarkLocalBucketPut$' "$benchtime"
# These time whole fixed-length runs: one iteration each.
run '^BenchmarkWALPutRate$' 1x
run '^BenchmarkRecovery$' 1x
# One long run whatever the mode's count: it loads COMPACTION_KEYS keys.
run '^BenchmarkCompaction$' 1x 1

log "done in $(($(date +%s) - start))s; raw output: $out"
echo
"$work/benchtable" <"$out"
if [ "$failed" != 0 ]; then
  log "some benchmarks failed; their rows are missing from the table"
  exit 1
fi
