#!/bin/sh
# A NodeWright agent step of a role package (nodewright.bridge.role_package): runs the role's tasks for the stage
# named in $1 with the Python and ansible-core the package brings (runtime/), against the host's root, where both
# agents run the step (chrooted into the host). Nothing of the host's Python is used.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/runtime/bin/python" "$here/runtime/stage.py" "$@"
