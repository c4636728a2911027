#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# A CPython for the tests of ansible-core 2.20 and newer (they need Python >= 3.12; this
# machine's is 3.11). None can be downloaded from a Python site here, but Debian's package
# registry serves CPython's source: the upstream tarball of Debian trixie's python3.13 source
# package (python3.13_<version>.orig.tar.xz). This script fetches it with apt-get, without
# touching the system's apt configuration (a sources list and lists directory of its own), and
# builds it into a cache directory keyed by version, as the cluster binaries are cached:
#
#     <cache>/python-<version>/bin/python3.13
#
# Prints that path. Reuses an earlier build. About 6 minutes cold on 2 cores.
#
# Environment:
#   NODEWRIGHT_CACHE_DIR   the cache (default ~/.cache/nodewright-bridge, as tests/cluster)
#   NW_PYTHON_SOURCE       the Debian source package (default python3.13)
#   NW_PYTHON_SUITE        the Debian suite that has it (default trixie)
set -euo pipefail
cache=${NODEWRIGHT_CACHE_DIR:-$HOME/.cache/nodewright-bridge}
source_package=${NW_PYTHON_SOURCE:-python3.13}
suite=${NW_PYTHON_SUITE:-trixie}
minor=${source_package#python}

# One build at a time per cache (as tests/cluster/build.sh): `make test` starts this script in the
# background during the cluster tests, and its strategy-matrix-new step then waits here for that
# build instead of starting a second one.
mkdir -p "$cache"
exec 9>"$cache/.build-python$minor.lock"
flock 9

# an earlier build of this minor version (the newest, if several)
while IFS= read -r dir; do
    if [[ -f "$dir/.complete" && -x "$dir/bin/python$minor" ]]; then
        echo "$dir/bin/python$minor"
        exit 0
    fi
done < <(find "$cache" -maxdepth 1 -type d -name "python-$minor.*" 2>/dev/null | sort -V -r)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$cache"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
    >"$work/apt/sources.list"
apt_options=(-q -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$work/apt/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
echo "build-python: fetching the $source_package source from Debian $suite" >&2
apt-get "${apt_options[@]}" update >&2
(cd "$work" && apt-get "${apt_options[@]}" source --download-only "$source_package" >&2)
tarball=$(find "$work" -maxdepth 1 -name "${source_package}_*.orig.tar.xz" | head -n 1)
version=$(basename "$tarball" .orig.tar.xz)
version=${version#"${source_package}"_}
prefix="$cache/python-$version"
echo "build-python: building CPython $version into $prefix" >&2
tar -xJf "$tarball" -C "$work"
src=$(find "$work" -maxdepth 1 -type d -name 'Python-*' | head -n 1)
# ssl, ctypes, zlib, sqlite3, lzma, bz2: what pip, ansible-core and the kubernetes client need
# (their headers come with Debian's -dev packages: libssl-dev, libffi-dev, zlib1g-dev, ...)
rm -rf "$prefix"
step() {  # step <log> <command...>: run in the source tree; on failure show the log's end
    local log=$1
    shift
    if ! (cd "$src" && "$@") >"$work/$log" 2>&1; then
        tail -n 60 "$work/$log" >&2
        exit 1
    fi
}
step configure.log ./configure --prefix="$prefix" --with-ensurepip=install
step make.log make -j"$(nproc)"
step install.log make install
"$prefix/bin/python$minor" -c 'import ssl, ctypes, zlib, sqlite3, lzma, bz2' \
    || { echo "build-python: the build lacks a module the tests need (Debian's -dev packages)" >&2; exit 1; }
touch "$prefix/.complete"  # only a finished, checked build is reused
echo "$prefix/bin/python$minor"
