#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# apply of the fails package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
proof_record apply "fix=${FIX:-none}"
if [ "${FIX:-}" != 1 ]; then
    echo "fails: apply failed on purpose (exit 3): set FIX=1 in the package's env to let it pass" >&2
    exit 3
fi
proof_install
