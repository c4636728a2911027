#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# post-interrupt-check of the proof package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
proof_record post-interrupt-check
proof_check_installed
