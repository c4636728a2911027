#!/bin/sh
# The package's Python (runtime/bin/python): its own interpreter started by its own dynamic loader with its own
# libraries (ld.so --library-path, not LD_LIBRARY_PATH, so the host programs it starts use the host's), whatever
# Python and libc the host has. PYTHONHOME and PYTHONPATH are removed again at startup (site/sitecustomize.py),
# so a host program written in Python that a task runs sees neither.
rt=$(cd "$(dirname "$0")/.." && pwd)
PYTHONHOME=$rt PYTHONPATH=$rt/site PYTHONDONTWRITEBYTECODE=1 NODEWRIGHT_ROLE_RUNTIME=$rt
export PYTHONHOME PYTHONPATH PYTHONDONTWRITEBYTECODE NODEWRIGHT_ROLE_RUNTIME
# the step's own copy of the loader (nodewright_role_stage.sh), so that the package's ld.so is never executed
exec "${NODEWRIGHT_ROLE_LOADER:-$rt/lib/ld.so}" --library-path "$rt/lib" "$rt/bin/python3" -s "$@"
