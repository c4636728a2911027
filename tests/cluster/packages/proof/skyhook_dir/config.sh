#!/bin/sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# config of the proof package (tests/cluster/packages/_lib/proof.sh)
set -eu
. "$STEP_ROOT/proof.sh"
# shellcheck disable=SC2046  # one field per ConfigMap file
proof_record config $(proof_configmaps)
