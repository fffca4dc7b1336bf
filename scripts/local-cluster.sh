#!/usr/bin/env bash
# The docker-compose topology without Docker: MinIO, a `strata server` with
# in-process compaction off, and a `strata compactor`, as three background
# processes on this machine, all on loopback.
#
#   scripts/local-cluster.sh start    build MinIO (scripts/minio.sh) and strata, start all three
#   scripts/local-cluster.sh stop     stop them gracefully (SIGTERM; the server flushes to MinIO)
#   scripts/local-cluster.sh status   which are running, and how to connect
#
# State (data, logs, pid files, the strata binary) lives in $STRATA_CLUSTER_DIR,
# default ./.local-cluster; MinIO's data stays there across stop and start.
# Environment:
#   STRATA_PORT        RESP port (default 6379, or a free port if 6379 is taken)
#   STRATA_MINIO_BIN   a MinIO server binary to use instead of scripts/minio.sh build
#   STRATA_BIN         a strata binary to use instead of building one from this checkout
#   STRATA_CACHE       where scripts/minio.sh caches its build
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
state=${STRATA_CLUSTER_DIR:-./.local-cluster}
if [ "${1:-}" = start ]; then mkdir -p "$state"; fi
if [ -d "$state" ]; then state=$(cd "$state" && pwd); fi

# Fixed local credentials, as scripts/minio.sh: MinIO listens on 127.0.0.1 only.
ACCESS_KEY=strata
SECRET_KEY="strata-secret"
BUCKET=strata
READY_TIMEOUT=${STRATA_READY_TIMEOUT:-60} # seconds, per process
STOP_TIMEOUT=${STRATA_STOP_TIMEOUT:-60}   # seconds of SIGTERM grace before SIGKILL

log() { printf 'local-cluster: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

# shellcheck source=ports.sh
. "$repo/scripts/ports.sh"

# pid_of NAME prints the pid of component NAME if its pid file names a live
# process that is still that component (a recycled pid is not).
pid_of() {
  local name=$1 pid args
  [ -f "$state/$name.pid" ] || return 1
  pid=$(cat "$state/$name.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  args=$(ps -o args= -p "$pid" 2>/dev/null) || return 1
  case $args in
  *"$(cat "$state/$name.cmd" 2>/dev/null || echo "$name")"*) echo "$pid" ;;
  *) return 1 ;;
  esac
}

# launch NAME ENV... -- BIN ARGS... starts a component in the background,
# detached from this script (its own session when setsid exists, stdin
# from /dev/null, output to its log), and records its pid.
launch() {
  local name=$1 pid
  shift
  local env=()
  while [ "$1" != -- ]; do
    env+=("$1")
    shift
  done
  shift
  local run=(env "${env[@]}" "$@")
  if command -v setsid >/dev/null; then run=(setsid "${run[@]}"); fi
  printf '\n==== %s: %s\n' "$(date '+%F %T')" "$*" >>"$state/$name.log"
  nohup "${run[@]}" </dev/null >>"$state/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$state/$name.pid"
  echo "$1" >"$state/$name.cmd" # for pid_of: the binary the pid must be running
  # Until the background shell has exec'd nohup, the pid runs this script,
  # and pid_of would take the component for dead (a loaded machine showed
  # it: "MinIO exited during startup" 0.3 s in, its log empty). Wait for
  # the exec, or for the process to end.
  local args
  for _ in $(seq 100); do
    args=$(ps -o args= -p "$pid" 2>/dev/null) || break
    case $args in *"$1"*) break ;; esac
    sleep 0.05
  done
}

# last_start NAME prints NAME's log from its last start (launch's ==== line).
last_start() {
  # shellcheck disable=SC2016 # a sed script, not shell
  sed -n '/^==== /h; /^==== /!H; ${x;p;}' "$state/$1.log"
}

# wait_log NAME TEXT waits until NAME's log has TEXT after its last start.
wait_log() {
  local name=$1 text=$2 deadline=$((SECONDS + READY_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    # shellcheck disable=SC2016 # a sed script, not shell
    if last_start "$name" | grep -qF -- "$text"; then
      return 0
    fi
    pid_of "$name" >/dev/null || die "$name exited during startup; last lines of $state/$name.log:
$(last_start "$name" | tail -n 20)"
    sleep 0.1
  done
  die "$name did not log '$text' within ${READY_TIMEOUT}s; see $state/$name.log"
}

# stop_one NAME sends SIGTERM and waits for the exit, then SIGKILL.
stop_one() {
  local name=$1 pid deadline
  if ! pid=$(pid_of "$name"); then
    rm -f "$state/$name.pid"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "$name did not exit within ${STOP_TIMEOUT}s of SIGTERM: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  rm -f "$state/$name.pid"
}

minio_bin() {
  if [ -n "${STRATA_MINIO_BIN:-}" ] && [ -x "$STRATA_MINIO_BIN" ]; then
    echo "$STRATA_MINIO_BIN"
  else
    "$repo/scripts/minio.sh" build
  fi
}

bucket_url() { echo "s3://$BUCKET/?endpoint=127.0.0.1:$(cat "$state/minio.port")&insecure=true"; }

start() {
  local running=()
  for name in minio server compactor; do
    if pid_of "$name" >/dev/null; then running+=("$name"); fi
  done
  if [ "${#running[@]}" -gt 0 ]; then
    die "already running: ${running[*]} (scripts/local-cluster.sh stop first)"
  fi
  command -v curl >/dev/null || die "start needs curl (to check MinIO and create the bucket)"
  # A start that fails half way stops what it started, so a retry begins clean.
  trap 'log "start failed: stopping what was started"; stop' EXIT

  local minio strata="$state/bin/strata" mport port
  minio=$(minio_bin)
  if [ -n "${STRATA_BIN:-}" ]; then
    [ -x "$STRATA_BIN" ] || die "STRATA_BIN $STRATA_BIN is not an executable"
    strata=$STRATA_BIN
  else
    command -v go >/dev/null || die "go is not on PATH"
    log "building strata into $strata"
    mkdir -p "$state/bin"
    (cd "$repo" && go build -o "$strata" ./cmd/strata)
  fi

  # The port can still be taken between free_port and MinIO's bind: then
  # MinIO exits at once saying so, and another port is tried.
  local attempt deadline=$((SECONDS + READY_TIMEOUT))
  for attempt in 1 2 3; do
    mport=$(free_port) || die "no free port found"
    echo "$mport" >"$state/minio.port"
    log "starting MinIO on 127.0.0.1:$mport, data in $state/minio-data"
    # MINIO_BROWSER=off: no web console, so no second listening port.
    launch minio MINIO_ROOT_USER=$ACCESS_KEY MINIO_ROOT_PASSWORD=$SECRET_KEY MINIO_BROWSER=off \
      MINIO_UPDATE=off MINIO_CI_CD=1 -- "$minio" server --quiet --address "127.0.0.1:$mport" "$state/minio-data"
    until curl -fsS -o /dev/null "http://127.0.0.1:$mport/minio/health/ready" 2>/dev/null; do
      if ! pid_of minio >/dev/null; then
        last_start minio | grep -qF "$MINIO_PORT_IN_USE" && [ "$attempt" -lt 3 ] && continue 2
        die "MinIO exited during startup; last lines of $state/minio.log:
$(last_start minio | tail -n 20)"
      fi
      [ "$SECONDS" -lt "$deadline" ] || die "MinIO not live within ${READY_TIMEOUT}s; see $state/minio.log"
      sleep 0.1
    done
    break
  done
  # curl signs the request itself (SigV4), so no MinIO client is needed.
  # 200: created; 409: it exists (a restart); anything else, retry while
  # MinIO finishes initializing.
  local code
  until code=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT --user "$ACCESS_KEY:$SECRET_KEY" \
    --aws-sigv4 "aws:amz:us-east-1:s3" "http://127.0.0.1:$mport/$BUCKET") && [[ $code == 200 || $code == 409 ]]; do
    [ "$SECONDS" -lt "$deadline" ] || die "cannot create bucket $BUCKET (HTTP $code)"
    sleep 0.2
  done
  log "bucket $BUCKET ready (HTTP $code)"

  if [ -n "${STRATA_PORT:-}" ]; then
    port=$STRATA_PORT
    ! port_taken "$port" || die "STRATA_PORT $port is taken"
  elif ! port_taken 6379; then
    port=6379
  else
    port=$(free_port) || die "no free port found"
    log "port 6379 is taken: using $port"
  fi
  echo "$port" >"$state/server.port"
  local creds=("AWS_ACCESS_KEY_ID=$ACCESS_KEY" "AWS_SECRET_ACCESS_KEY=$SECRET_KEY")
  log "starting strata server on 127.0.0.1:$port"
  launch server "${creds[@]}" -- "$strata" server --port "$port" --bucket "$(bucket_url)" --compaction off
  wait_log server "ready to accept connections"
  log "starting strata compactor"
  launch compactor "${creds[@]}" -- "$strata" compactor --bucket "$(bucket_url)"
  wait_log compactor "compactor running"
  trap - EXIT
  status
}

stop() {
  # The server first: it flushes its WAL and memtable to MinIO on the way out.
  stop_one server
  stop_one compactor
  stop_one minio
  log "stopped; data kept in $state"
}

status() {
  local all=0
  for name in minio server compactor; do
    local pid
    if pid=$(pid_of "$name"); then
      printf '%-10s running (pid %s), log %s\n' "$name" "$pid" "$state/$name.log"
    else
      printf '%-10s stopped\n' "$name"
      all=1
    fi
  done
  if [ "$all" = 0 ]; then
    cat <<EOF
connect:   redis-cli -p $(cat "$state/server.port")
bucket:    $(bucket_url)
env:       export AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY
stop:      scripts/local-cluster.sh stop
EOF
  fi
  return "$all"
}

case ${1:-help} in
start) start ;;
stop) stop ;;
status) status ;;
help | -h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0" ;;
*)
  log "unknown command: $1 (start, stop or status)"
  exit 2
  ;;
esac
