# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""One version (docs/versioning.md): galaxy.yml's is the next release; the User-Agent says it, no plugin or role was
added in a later one, and the released versions of changelogs/changelog.yaml are all before it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube_transport
from ansible_collections.nodewright.bridge.plugins.module_utils.model import constants

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))


def _version(text):
    return tuple(int(part) for part in text.split('.'))


def _galaxy_version():
    with open(os.path.join(REPO, 'galaxy.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)['version']


def test_the_code_and_the_user_agent_say_galaxys_version():
    assert constants.COLLECTION_VERSION == _galaxy_version()
    assert kube_transport.USER_AGENT == 'nodewright.bridge/%s' % _galaxy_version()


def test_the_next_release_comes_after_every_released_one():
    with open(os.path.join(REPO, 'changelogs', 'changelog.yaml'), encoding='utf-8') as handle:
        released = list((yaml.safe_load(handle) or {}).get('releases') or {})
    assert released and all(_version(v) < _version(_galaxy_version()) for v in released), (released, _galaxy_version())


def test_nothing_was_added_in_a_version_after_the_next_release():
    found = {}
    for folder in ('plugins', 'roles', 'meta'):
        for root, dummy, files in os.walk(os.path.join(REPO, folder)):
            for name in files:
                if name.endswith(('.py', '.yml', '.yaml')):
                    with open(os.path.join(root, name), encoding='utf-8') as handle:
                        for value in re.findall(r'version_added:\s*["\']?([0-9]+\.[0-9]+\.[0-9]+)', handle.read()):
                            found.setdefault(value, []).append(os.path.relpath(os.path.join(root, name), REPO))
    assert found, 'no version_added read'
    later = dict((v, files) for v, files in found.items() if _version(v) > _version(_galaxy_version()))
    assert later == {}, later
