#!/usr/bin/env bash
# A Docker engine for the test run where none answers: `engine.sh start` starts Debian's dockerd
# (storage driver vfs, no iptables rules: this machine's kernel offers neither overlayfs in
# containers nor a firewall we may change), `engine.sh stop` stops the one it started and no other.
# Images stay in dockerd's data root between runs, which is what keeps the builds cached.
set -euo pipefail
STATE=${HMSPROXY_ENGINE_STATE:-/run/hmsproxy-dockerd}
PIDFILE=$STATE/dockerd.pid

case "${1:-}" in
start)
    if docker info >/dev/null 2>&1; then
        echo "engine: a Docker engine already answers; using it"
        exit 0
    fi
    command -v dockerd >/dev/null || { echo "engine: no dockerd (apt-get install docker.io)" >&2; exit 1; }
    [ "$(id -u)" = 0 ] || { echo "engine: dockerd needs root" >&2; exit 1; }
    mkdir -p "$STATE"
    dockerd --storage-driver=vfs --iptables=false --pidfile "$PIDFILE.daemon" >"$STATE/dockerd.log" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 60); do
        docker info >/dev/null 2>&1 && { echo "engine: dockerd started (log: $STATE/dockerd.log)"; exit 0; }
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
        sleep 1
    done
    echo "engine: dockerd did not answer; the end of its log:" >&2
    tail -20 "$STATE/dockerd.log" >&2
    exit 1
    ;;
stop)
    [ -f "$PIDFILE" ] || exit 0  # not ours
    pid=$(cat "$PIDFILE")
    if kill -0 "$pid" 2>/dev/null; then
        # Containers a failed test left behind would keep the daemon waiting.
        docker ps -q --filter label=com.docker.compose.project | xargs -r docker rm -f >/dev/null 2>&1 || true
        kill "$pid"
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    fi
    rm -f "$PIDFILE"
    echo "engine: dockerd stopped"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
