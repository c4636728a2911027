#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# upgrade of the proof package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
# an upgrade step: the agent passes the installed version and this one
proof_record upgrade "from=$1" "to=$2"
proof_install
