#!/bin/sh
# A NodeWright agent step of a role package (nodewright.bridge.role_package): runs the role's tasks for the stage
# named in $1 with the Python and ansible-core the package brings (runtime/), against the host's root, where both
# agents run the step (chrooted into the host). Nothing of the host's Python is used.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# a host the runtime cannot run on says so, naming what is wrong (not a loader's or a shell's message)
want=$(cat "$here/runtime/arch")
have=$(uname -m)
if [ "$have" != "$want" ]; then
    echo "nodewright: this role package's runtime is built for $want; the host is $have" >&2
    exit 1
fi
if ! "$here/runtime/lib/ld.so" --version > /dev/null 2>&1; then
    echo "nodewright: the package's runtime cannot be executed from $here/runtime (a noexec file system?)" >&2
    exit 1
fi
exec "$here/runtime/bin/python" "$here/runtime/stage.py" "$@"
