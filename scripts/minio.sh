#!/usr/bin/env bash
# The MinIO server Strata is tested against: built from source at a pinned
# version and cached outside the repository, so every clone on a machine
# shares one build (cold: minutes; warm: instant).
#
#   scripts/minio.sh build            build the pinned MinIO if needed; print its path
#   scripts/minio.sh path             print the path if the pinned build is cached, else fail
#   scripts/minio.sh target           print where the pinned build is (or will be) cached
#   scripts/minio.sh start [DATADIR]  run MinIO on 127.0.0.1 (a free port) with a bucket
#                                     "strata", print endpoint and keys; Ctrl-C stops it
#
# Environment: STRATA_CACHE (default $HOME/.cache/strata/bin) holds the binary
# as "minio" and its version as "minio.version"; blob/blobtest looks there too.
set -euo pipefail

# github.com/minio/minio has no semver tags, so the Go proxy serves pseudo-versions
# only. This is the newest it served when pinned (upstream commit 7aac2a2c5b7c).
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

# Fixed local test credentials: MinIO listens on 127.0.0.1 only.
ACCESS_KEY=strata
SECRET_KEY=strata-secret
BUCKET=strata

cache=${STRATA_CACHE:-$HOME/.cache/strata/bin}
bin=$cache/minio
stamp=$cache/minio.version

log() { printf 'minio.sh: %s\n' "$*" >&2; }

# shellcheck source=ports.sh
. "$(dirname "$0")/ports.sh"

cached() { [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$MINIO_VERSION" ]; }

build() {
  if cached; then
    log "cached: $bin ($MINIO_VERSION)"
    echo "$bin"
    return
  fi
  command -v go >/dev/null || { log "go is not on PATH"; return 1; }
  mkdir -p "$cache"
  # Build into a private directory and move into place, so an interrupted
  # build never leaves a half-written binary that looks cached.
  local tmp start
  tmp=$(mktemp -d "$cache/.build.XXXXXX")
  start=$(date +%s)
  log "building $MINIO_MODULE@$MINIO_VERSION into $cache (takes minutes the first time)"
  # GOFLAGS is cleared: flags meant for this repository (-mod=vendor, say)
  # break or change a build of another module.
  if ! GOBIN=$tmp CGO_ENABLED=0 GOFLAGS='' go install "$MINIO_MODULE@$MINIO_VERSION"; then
    rm -rf "$tmp"
    log "build failed"
    return 1
  fi
  mv -f "$tmp/minio" "$bin"
  rm -rf "$tmp"
  echo "$MINIO_VERSION" >"$stamp"
  log "built $bin in $(($(date +%s) - start))s"
  echo "$bin"
}

start() {
  local dir=${1:-} port pid
  command -v curl >/dev/null || { log "start needs curl"; return 1; }
  build >/dev/null
  if [ -z "$dir" ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-minio.XXXXXX")
  fi
  mkdir -p "$dir"
  # The port can still be taken between free_port and MinIO's bind: then
  # MinIO exits at once saying so, and another port is tried.
  # Its output goes to the terminal and to $out, to tell why it exited.
  local attempt out
  out=$(mktemp "${TMPDIR:-/tmp}/strata-minio-out.XXXXXX")
  trap 'rm -f "$out"' EXIT
  for attempt in 1 2 3; do
    port=$(free_port) || { log "no free port found"; return 1; }
    log "starting MinIO on 127.0.0.1:$port, data in $dir"
    # MINIO_BROWSER=off: no web console, so no second listening port.
    MINIO_ROOT_USER=$ACCESS_KEY MINIO_ROOT_PASSWORD=$SECRET_KEY MINIO_BROWSER=off \
      MINIO_UPDATE=off MINIO_CI_CD=1 \
      "$bin" server --quiet --address "127.0.0.1:$port" "$dir" > >(tee "$out") 2>&1 &
    pid=$!
    trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$out"' EXIT
    trap 'exit 130' INT TERM
    for _ in $(seq 1 300); do
      if curl -fsS -o /dev/null "http://127.0.0.1:$port/minio/health/ready" 2>/dev/null; then break 2; fi
      if ! kill -0 "$pid" 2>/dev/null; then
        grep -qF "$MINIO_PORT_IN_USE" "$out" && [ "$attempt" -lt 3 ] && continue 2
        log "MinIO exited during startup"
        return 1
      fi
      sleep 0.1
    done
    break
  done
  # curl signs the request itself (SigV4), so no MinIO client is needed.
  if curl -fsS -o /dev/null -X PUT --user "$ACCESS_KEY:$SECRET_KEY" --aws-sigv4 "aws:amz:us-east-1:s3" \
    "http://127.0.0.1:$port/$BUCKET" 2>/dev/null; then
    log "created bucket $BUCKET"
  else
    log "bucket $BUCKET not created (it may exist already)"
  fi
  cat <<EOF
endpoint:   127.0.0.1:$port
access key: $ACCESS_KEY
secret key: $SECRET_KEY
bucket:     $BUCKET
data dir:   $dir
url:        s3://$BUCKET/?endpoint=127.0.0.1:$port&insecure=true
env:        export AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY
EOF
  log "running (pid $pid); Ctrl-C stops it"
  wait "$pid"
}

case ${1:-help} in
build) build ;;
path)
  cached || { log "MinIO $MINIO_VERSION is not built yet: run scripts/minio.sh build"; exit 1; }
  echo "$bin"
  ;;
target) echo "$bin" ;;
start) shift; start "$@" ;;
version) echo "$MINIO_VERSION" ;;
help | -h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0" ;;
*) log "unknown command: $1"; exit 2 ;;
esac
