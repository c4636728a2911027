#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# apply of the hang package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
# far longer than any stage timeout of the tests; HANG_SECONDS from the package env shortens it
proof_record apply "sleep=${HANG_SECONDS:-86400}"
exec sleep "${HANG_SECONDS:-86400}"
