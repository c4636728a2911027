# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The package runtime's Python: once started, the variables that located its library leave the environment, so
the host programs a task runs (some written in the host's Python) do not inherit them; runtime/bin/python sets them
again for each Python of the package it starts."""

import os
import warnings

for _name in ('PYTHONHOME', 'PYTHONPATH'):
    os.environ.pop(_name, None)

# ansible-core's ssh agent support imports DSA from cryptography, which warns on every start; a stage never uses it,
# and the warning would open every step's log
warnings.filterwarnings('ignore', message='DSA is deprecated')
