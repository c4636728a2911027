#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# uninstall-check of the fails package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
proof_record uninstall-check
if [ -e "$PROOF_STATE" ]; then
    echo "fails: $PROOF_STATE is still there after uninstall" >&2
    exit 1
fi
