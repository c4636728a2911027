#!/bin/sh
# The upgrade-check step of a role package (no arguments, as every upgrade step).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/nodewright_role_stage.sh" upgrade-check
