#!/usr/bin/env bash
# Instructions per operation of a Go benchmark, counted by cachegrind: a
# figure that does not move with the machine's load, for comparing two
# builds of a hot path on a shared, noisy machine where ns/op moves by
# 30% from run to run. It runs the benchmark twice under valgrind, for 1
# and for N+1 iterations, and divides the difference (the setup cancels)
# by N times PER (units per iteration, e.g. 100 keys per scan), then
# prints the total and the functions that differ most.
#
#   scripts/instructions.sh PKG BENCH [N] [PER] [TOP]    (PKG from the repository root)
#   scripts/instructions.sh ./lsm 'IterScan/versions=4$' 2000 100
#   scripts/instructions.sh ./keyspace 'WriteCommands/^INCR$' 100000
#
# The benchmark runs with GOMAXPROCS=1 (valgrind runs one thread at a
# time; more Ps spin in the scheduler), GOGC=off (no collection cycles
# landing differently in the two runs), async preemption off
# (callgrind and cachegrind mishandle its signals) and heap profiling off
# (it samples allocations at random, and each sample walks the stack: a
# few hundred thousand instructions that differ from run to run). Background work of the
# engine (WAL encoding, flushes) is counted where the benchmark causes it.
# Needs valgrind; installs it with apt-get when missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=${1:?package, e.g. ./lsm}
bench=${2:?benchmark regexp}
n=${3:-1000}
per=${4:-1}
top=${5:-25}

if ! command -v valgrind >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # A fresh container has no package lists: update only when install fails.
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q valgrind >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q valgrind >/dev/null; } || true
fi
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/bench.test" "$pkg"
for iters in 1 $((n + 1)); do
  GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1,memprofilerate=0 valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file="$dir/cg.$iters" "$dir/bench.test" -test.run '^$' \
    -test.bench "$bench" -test.benchtime "${iters}x" >/dev/null 2>&1
done

# cg_annotate lists "count (pct) file:function" per function, and the
# whole run's count on its PROGRAM TOTALS line; subtract the short run's
# counts from the long run's.
total() { cg_annotate --auto=no "$1" | awk '$3 == "PROGRAM" { gsub(",", "", $1); print $1 }'; }
counts() { cg_annotate --auto=no --threshold=0 "$1" | awk '$2 ~ /^\(/ && $3 != "PROGRAM" { gsub(",", "", $1); print $1, $NF }'; }
short=$dir/cg.1 long=$dir/cg.$((n + 1))
echo "$(( ($(total "$long") - $(total "$short")) / (n * per) )) instructions per unit ($((n * per)) units)"
join -1 2 -2 2 -a 2 -e 0 -o 0,1.1,2.1 <(counts "$short" | sort -k2) <(counts "$long" | sort -k2) |
  awk -v units=$((n * per)) '{ d = $3 - $2; name = $1; sub(/^.*:/, "", name); by[name] += d }
    END { for (f in by) printf "%10.1f  %s\n", by[f] / units, f }' | sort -rn | sed -n "1,${top}p"
