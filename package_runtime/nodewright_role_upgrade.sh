#!/bin/sh
# The upgrade step of a role package: the agent's upgrade steps take no arguments (PREVIOUS_VERSION and
# CURRENT_VERSION come in the environment).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/nodewright_role_stage.sh" upgrade
