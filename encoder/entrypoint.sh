#!/bin/sh
# Fly mounts the work volume owned by root: the work dir on it is made the node user's here, as
# root, and the encoder itself runs as node. Started as another user already, it just runs.
set -eu
if [ "$(id -u)" != 0 ]; then exec "$@"; fi
mkdir -p "$WORK_DIR"
chown node:node "$WORK_DIR"
exec setpriv --reuid=node --regid=node --init-groups -- "$@"
