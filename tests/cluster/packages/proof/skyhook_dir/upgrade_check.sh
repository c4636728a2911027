#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# upgrade-check of the proof package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
proof_record upgrade-check "from=$1" "to=$2"
proof_check_installed
