# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The render's YAML writer: what it writes reads back as the data, Jinja-looking text tagged, scripts as literal blocks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.block_yaml import Expression, flow, to_block_yaml


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """YAML with Ansible's !unsafe tag, read as the plain value."""


_Loader.add_constructor('!unsafe', lambda loader, node: loader.construct_scalar(node))


def _load(text):
    return yaml.load(text + '\n', Loader=_Loader)  # noqa: S506 - a SafeLoader with the !unsafe tag


DATA = [
    {'a': 1, 'b': 2.5, 'c': 1e20, 'd': None, 'e': True, 'f': False, 'g': '', 'h': 'yes', 'i': 'on', 'j': '1.4.0'},
    {'k': [], 'l': {}, 'm': [[1, 2], ['x', {'y': 'z'}]], 'n': [{'o': 'p', 'q': [1]}, 'r', [], {}]},
    {'script': '#!/bin/bash\nset -e\nexit 0\n', 'no newline at the end': 'one\ntwo', 'blank lines': 'a\n\nb\n',
     'leading space': ' x\ny', 'trailing blank lines': 'a\n\n', 'control': 'a\x01\nb', 'tab': 'a\tb\nc'},
    {'jinja': '{{ x }}', 'block': 'level: {{ x }}\nmode: "{% raw %}"\n', 'comment': '{# c #}', 'nested': [['{{ y }}']]},
    {'keys: odd': 1, 'true': 'false', 'null': 'x', 'with space': 'a b', 'quote"s': "it's", 'unicode': 'é ✓', 'colon': 'a: b'},
    # YAML's other line breaks and what it does not print, in text that would otherwise be a literal block
    {'line separator': 'a\u2028b\nc', 'paragraph separator': 'a\nb\u2029', 'next line': 'a\x85b\nc', 'cr': 'a\r\nb\n',
     'c1': 'a\x9b\nb', 'bom inside': 'a\ufeffb\nc', 'keys too \u2028': 'x\x85'},
]


@pytest.mark.parametrize('data', DATA)
def test_what_is_written_reads_back_as_the_data(data):
    assert _load(to_block_yaml(data)) == data
    assert _load(to_block_yaml(data, 4, 'key')) == {'key': data}
    assert _load(to_block_yaml([data], 2)) == [data]


def test_scalars_and_empty_values_at_the_top():
    for data in ('text', 3, None, [], {}, 'two\nlines\n'):
        assert _load(to_block_yaml(data)) == data


def test_scripts_are_literal_blocks_indented_under_their_key():
    text = to_block_yaml({'cm': {'apply.sh': '#!/bin/bash\nset -e\n', 'last': 'a\nb'}}, 2, 'doc')
    assert text == '  doc:\n    cm:\n      apply.sh: |\n        #!/bin/bash\n        set -e\n      last: |-\n        a\n        b'


def test_text_that_looks_like_jinja_is_tagged_unsafe_per_string():
    text = to_block_yaml({'a': '{{ x }}', 'b': 'plain', 'c': 'l1 {% y %}\nl2\n', 'd': ['{# z #}']})
    assert text.count('!unsafe') == 3
    assert 'a: !unsafe "{{ x }}"' in text
    assert 'c: !unsafe |' in text
    assert 'b: plain' in text
    tagged = yaml.compose(text)
    assert [n.tag for k, n in tagged.value][:3] == ['!unsafe', 'tag:yaml.org,2002:str', '!unsafe']


def test_the_playbooks_own_jinja_is_not_tagged():
    text = to_block_yaml({'name': Expression('{{ inventory_hostname }}')})
    assert text == 'name: "{{ inventory_hostname }}"'


def test_ambiguous_strings_are_quoted_and_plain_ones_are_not():
    assert to_block_yaml({'v': 'yes', 'w': '1.0', 'x': 'kernel-tuning', 'z': 'a/b_c.d', 'y': 'n'}) == \
        'v: "yes"\nw: "1.0"\nx: kernel-tuning\nz: a/b_c.d\n"y": "n"'


def test_flow_style_for_short_values():
    assert flow({'type': 'service', 'services': ['containerd', 'kubelet']}) == '{type: service, services: [containerd, kubelet]}'
    assert flow(['{{ x }}']) == '[!unsafe "{{ x }}"]'
    assert _load(flow({'a': [1, None, 'b c']})) == {'a': [1, None, 'b c']}
