#!/bin/sh
# Install every Debian package that building, testing and the demo need.
# Idempotent: when everything is present it changes nothing.
set -eu

# postgresql: tests/packaging/test_postgresql.py runs examples/postgresql
# against PostgreSQL 15 (its own servers on free ports, as user postgres).
PKGS="build-essential pkg-config clang libclang-rt-14-dev libzookeeper-mt-dev zookeeper libevent-dev
libinih-dev libsystemd-dev libcmocka-dev python3 python3-pytest python3-pytest-xdist python3-kazoo
default-jre-headless valgrind socat procps util-linux strace prometheus
haproxy debhelper dpkg-dev mandoc shellcheck iproute2 iputils-arping systemd git postgresql"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing; run this script as root" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing
