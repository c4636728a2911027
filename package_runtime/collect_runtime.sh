#!/bin/sh
# Run inside the runtime image's build (nodewright.bridge.role_package): gathers a Python that runs on any host
# into $1 (the package's skyhook_dir/runtime): the base image's interpreter, its standard library (without what a
# stage never needs), the shared libraries it and the installed packages load, and the dynamic loader itself
# (lib/ld.so), so that bin/python runs with none of the host's libraries. $2: the site directory pip filled.
set -eu
rt=$1
site=$2
python=$(readlink -f "$(command -v python3)")
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
mkdir -p "$rt/bin" "$rt/lib"
cp "$python" "$rt/bin/python3"
cp -a "/usr/lib/python$version" "$rt/lib/python$version"
for unused in test idlelib tkinter turtledemo ensurepip pydoc_data lib2to3 site-packages dist-packages venv/scripts; do
    rm -rf "${rt:?}/lib/python$version/$unused"
done
rm -rf "$rt/lib/python$version/config-$version-"*
# extension modules a stage never loads (and so their libraries: sqlite, Berkeley DB, readline, ncurses)
for unused in _sqlite3 _dbm _gdbm readline _curses _curses_panel _tkinter _test xxlimited _xxtestfuzz; do
    rm -f "$rt/lib/python$version/lib-dynload/$unused".*so "$rt/lib/python$version/lib-dynload/$unused"_*.so
done
find "$rt/lib/python$version" -name '__pycache__' -prune -exec rm -rf {} +
mv "$site" "$rt/site"
rm -rf "$rt/site/ansible_test"  # ansible-core's test tool (ansible-test), not for stages
find "$rt/site" -name '__pycache__' -prune -exec rm -rf {} +
# the libraries: what the interpreter and every extension module (standard library and packages) link
{
    ldd "$python"
    find "$rt/lib/python$version/lib-dynload" "$rt/site" -name '*.so' -exec ldd {} \;
} 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u > /tmp/libs
loader=$(ldd "$python" | awk '$1 ~ /ld-linux/ { print $1 }')
while read -r lib; do
    [ "$lib" = "$loader" ] && continue
    cp -L "$lib" "$rt/lib/"
done < /tmp/libs
cp -L "$loader" "$rt/lib/ld.so"
uname -m > "$rt/arch"  # the machine the runtime's binaries are for (the stage script compares the host's)
# bytecode compiled once, here: the runtime directory is copied to the host for every stage and never written
# there (PYTHONDONTWRITEBYTECODE), so without it every step compiles ansible-core again (seconds per step).
# unchecked-hash: no source timestamps in the files, so the same sources give the same layer
env -i PYTHONHOME="$rt" PYTHONPATH="$rt/site" "$rt/lib/ld.so" --library-path "$rt/lib" "$rt/bin/python3" -s \
    -m compileall -q -j 0 --invalidation-mode unchecked-hash "$rt/lib/python$version" "$rt/site" > /dev/null
# the runtime on its own: every library from $rt/lib, the standard library and packages from $rt
env -i PYTHONHOME="$rt" PYTHONPATH="$rt/site" "$rt/lib/ld.so" --library-path "$rt/lib" "$rt/bin/python3" -s -c \
    'import ansible.cli.playbook, yaml, jinja2, ssl, hashlib, json, ctypes; print("runtime: ansible-core", ansible.__version__ if hasattr(ansible, "__version__") else "")'
