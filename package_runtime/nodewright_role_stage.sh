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
# The loader the package's Python runs under is a copy of runtime/lib/ld.so that this step alone executes. A file
# being executed cannot be written ("Text file busy"), and the next stage pod's init container copies the package
# over this directory while a step of the pod it replaces may still run (the agent lets a step finish on SIGTERM):
# with every step executing the shared ld.so, that copy failed.
loader="$here/runtime/lib/ld.so.step-$$"
cp "$here/runtime/lib/ld.so" "$loader"
chmod 0755 "$loader"
trap 'rm -f "$loader"' EXIT
if ! "$loader" --version > /dev/null 2>&1; then
    echo "nodewright: the package's runtime cannot be executed from $here/runtime (a noexec file system?)" >&2
    exit 1
fi
NODEWRIGHT_ROLE_LOADER=$loader
export NODEWRIGHT_ROLE_LOADER
# not exec: the trap removes this step's loader when the step ends
"$here/runtime/bin/python" "$here/runtime/stage.py" "$@"
