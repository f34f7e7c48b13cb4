#!/usr/bin/env bash
# The local images the container tests build on, made from Debian's packages because no image
# registry is reachable here (python:3.11-slim and postgres:15 cannot be pulled):
#
#   hmsproxy-base:bookworm   debootstrap's minbase bookworm, with this machine's CA certificates
#                            and a pip.conf naming their bundle (pip inside a build needs them)
#   hmsproxy-postgres:15     bookworm's PostgreSQL 15 on that base (deploy/local/postgres/)
#
# Both are built once: the root filesystem is kept in ~/.cache/hmsproxy/containers (like the Hive
# jars), and an image whose recipe label matches is not built again.
#   docker build --build-arg BASE_IMAGE=hmsproxy-base:bookworm --network host -t hmsproxy:dev .
#   POSTGRES_IMAGE=hmsproxy-postgres:15 docker compose up -d --wait
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${HMSPROXY_BASE_IMAGE:-hmsproxy-base:bookworm}
POSTGRES=${HMSPROXY_POSTGRES_IMAGE:-hmsproxy-postgres:15}
CACHE=${HMSPROXY_CACHE:-$HOME/.cache/hmsproxy}/containers
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

# What the base depends on: this script and the machine's CA bundle.
recipe=$(cat "$0" "$CA_BUNDLE" 2>/dev/null | sha256sum | cut -c1-16)

if [ "$(docker image inspect -f '{{index .Config.Labels "org.hmsproxy.recipe"}}' "$BASE" 2>/dev/null)" != "$recipe" ]; then
    command -v debootstrap >/dev/null || { echo "images: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }
    mkdir -p "$CACHE"
    rootfs=$CACHE/bookworm-minbase-$recipe.tar
    if [ ! -s "$rootfs" ]; then
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        echo "images: debootstrap bookworm (once, about a minute)"
        debootstrap --variant=minbase bookworm "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
            { tail -20 "$work/debootstrap.log" >&2; exit 1; }
        root=$work/root
        printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
            "$MIRROR" "$MIRROR" >"$root/etc/apt/sources.list"
        # This machine's own CAs (its network's egress proxy signs with them): in the bundle for pip,
        # and where update-ca-certificates finds them when a package later installs ca-certificates.
        mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl/certs"
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
        cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
        printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        tar -C "$root" -cf "$rootfs.tmp" . && mv "$rootfs.tmp" "$rootfs"
        rm -rf "$work"
        trap - EXIT
    fi
    docker import \
        --change "LABEL org.hmsproxy.recipe=$recipe" \
        --change "ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change 'CMD ["bash"]' \
        "$rootfs" "$BASE" >/dev/null
    echo "images: $BASE imported from $rootfs"
fi

# Cached by the engine's build cache: a no-op when nothing changed.
DOCKER_BUILDKIT=0 docker build -q --network host --build-arg BASE_IMAGE="$BASE" -t "$POSTGRES" "$HERE/postgres" >/dev/null
echo "images: $BASE and $POSTGRES ready"
