# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

That host is not reachable from our CI machines, but PyPI is. ansible-test runs this file
(as __main__) inside a fresh virtualenv with pip install arguments; we install the pip
that ships with CPython (ensurepip), then let it install the requested packages from PyPI.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ensurepip
import os
import subprocess
import sys

# get-pip.py options that pip itself does not know
GET_PIP_ONLY = ('--no-setuptools', '--no-wheel')


def main():
    ensurepip.bootstrap(upgrade=True)
    args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
    # ansible-test hides pip's configuration (PIP_CONFIG_FILE=/dev/null); a machine behind a
    # TLS-inspecting proxy needs its CA bundle, which sanity.sh records next to this file.
    cert = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pip-cert-bundle')
    if os.path.exists(cert):
        with open(cert) as handle:
            bundle = handle.read().strip()
        if bundle:
            args = ['--cert', bundle] + args
    subprocess.check_call([sys.executable, '-m', 'pip', 'install', '--upgrade'] + args)


if __name__ == '__main__':
    main()
