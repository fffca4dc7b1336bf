# shellcheck shell=bash
# Loopback ports for the servers the scripts start; sourced by minio.sh and
# local-cluster.sh, not run.

# port_taken reports whether something accepts connections on 127.0.0.1:$1.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port prints a port on 127.0.0.1 that nothing listens on, below the
# kernel's ephemeral range: a port in that range can be the local end of an
# outgoing connection (tests, clients), which nothing listens on but a bind
# still fails on. It fails if 100 tries find none.
free_port() {
  local p lo=32768
  if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
  fi
  [ "$lo" -gt 11024 ] || lo=32768
  for _ in $(seq 1 100); do
    p=$((10000 + RANDOM % (lo - 10000)))
    if ! port_taken "$p"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# MINIO_PORT_IN_USE is what MinIO logs when its port was taken between
# free_port and its bind; the scripts then try another port.
MINIO_PORT_IN_USE="port is already in use"
