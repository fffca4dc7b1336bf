#!/usr/bin/env bash
# RESP benchmarks: redis-benchmark against `strata server` on the local-disk
# default (durable: appendfsync always; async: everysec) and against
# redis-server on the same machine in the same run (appendonly yes with
# appendfsync always, and everysec). Prints one table of requests/s and the
# ratios strata/redis for the matching durability.
#
#   scripts/bench_resp.sh            50 clients, 100k requests per test, without and with -P 16
#   N=20000 scripts/bench_resp.sh    fewer requests (a quick look)
#   TESTS=set,get scripts/bench_resp.sh
#
# Needs redis-server and redis-benchmark (apt-get install redis-server
# redis-tools); builds strata itself.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
TESTS=${TESTS:-set,get,incr,lpush,lpop,sadd,hset,zadd,lrange_100,mset}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for bin in redis-server redis-benchmark redis-cli; do
  command -v "$bin" >/dev/null || { echo "error: $bin not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
go build -o "$work/strata" ./cmd/strata

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
  echo $((20000 + RANDOM % 20000)); }

wait_ready() {
  for _ in $(seq 100); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "error: nothing answers on port $1" >&2
  exit 1
}

# start NAME: starts one server, prints its port.
start() {
  local port; port=$(free_port)
  case "$1" in
    redis-always|redis-everysec)
      mkdir -p "$work/$1"
      redis-server --port "$port" --bind 127.0.0.1 --dir "$work/$1" --save '' --appendonly yes \
        --appendfsync "${1#redis-}" --daemonize no >"$work/$1.log" 2>&1 &
      ;;
    strata-durable|strata-async)
      local fsync=always; [ "$1" = strata-async ] && fsync=everysec
      "$work/strata" server --port "$port" --dir "$work/$1" --appendfsync "$fsync" >"$work/$1.log" 2>&1 &
      ;;
  esac
  pids+=($!)
  wait_ready "$port"
  echo "$port"
}

# run PORT PIPELINE: prints "test,rps" lines.
run() {
  redis-benchmark -p "$1" -c "$CLIENTS" -n "$N" -P "$2" -t "$TESTS" -r 100000 --csv -q 2>/dev/null |
    tr -d '"' | awk -F, '$1 != "test" { name = $1; sub(/ .*/, "", name); print name "," $2 }'
}

declare -A rps
for server in redis-always redis-everysec strata-durable strata-async; do
  port=$(start "$server")
  for p in 1 16; do
    while IFS=, read -r test value; do
      rps["$server,$p,$test"]=$value
    done < <(run "$port" "$p")
  done
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
done

printf '\nredis-benchmark, %s clients, %s requests per test, requests/s (higher is better)\n\n' "$CLIENTS" "$N"
printf '%-22s %3s %14s %14s %14s %14s %10s %10s\n' test P redis-always strata-durable redis-everysec strata-async dur/always async/everysec
for p in 1 16; do
  for test in $(for k in "${!rps[@]}"; do IFS=, read -r s pp t <<<"$k"; [ "$pp" = "$p" ] && [ "$s" = redis-always ] && echo "$t"; done | sort); do
    ra=${rps["redis-always,$p,$test"]:-0}; re=${rps["redis-everysec,$p,$test"]:-0}
    sd=${rps["strata-durable,$p,$test"]:-0}; sa=${rps["strata-async,$p,$test"]:-0}
    awk -v t="$test" -v p="$p" -v ra="$ra" -v re="$re" -v sd="$sd" -v sa="$sa" 'BEGIN {
      r1 = ra > 0 ? sprintf("%.2fx", sd / ra) : "-"; r2 = re > 0 ? sprintf("%.2fx", sa / re) : "-"
      printf "%-22s %3s %14.0f %14.0f %14.0f %14.0f %10s %10s\n", t, p, ra, sd, re, sa, r1, r2 }'
  done
done
