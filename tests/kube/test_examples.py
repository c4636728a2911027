# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The example files against the API server with the operator's CRDs (../shared/crds, v0.15 line).

The Skyhook example is accepted as the operator would get it from ``kubectl apply -f`` (the CRD's
schema checked by the server); the NodeWright example is refused because that group is not served,
which is why the Skyhook file exists (README: which file for which operator).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes.client.rest import ApiException

EXAMPLES = Path(__file__).resolve().parents[2] / 'examples'
PLURALS = {'Skyhook': 'skyhooks', 'NodeWright': 'nodewrights', 'DeploymentPolicy': 'deploymentpolicies'}


def _docs(name):
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def _kept(stored, sent, path='spec'):
    """The fields of ``sent`` that ``stored`` lost or changed (the server may add defaults)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [path]
        return [p for key, value in sent.items() for p in
                ([path + '.' + key] if key not in stored else _kept(stored[key], value, path + '.' + key))]
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [path]
        return [p for i, (a, b) in enumerate(zip(stored, sent)) for p in _kept(a, b, '%s[%d]' % (path, i))]
    return [] if stored == sent else [path]


def _create(custom, doc):
    group, version = doc['apiVersion'].split('/')
    return custom.create_cluster_custom_object(group, version, PLURALS[doc['kind']], doc)


def test_the_skyhook_example_is_accepted_by_the_operators_crds(cluster):
    custom = kclient.CustomObjectsApi(cluster.api)
    created = []
    try:
        for doc in _docs('gpu-node-tuning-skyhook.yaml'):
            stored = _create(custom, doc)
            created.append(doc)
            # nothing pruned or changed: every field is one the CRD knows (the server adds its defaults)
            assert _kept(stored['spec'], doc['spec']) == []
    finally:
        for doc in created:
            group, version = doc['apiVersion'].split('/')
            custom.delete_cluster_custom_object(group, version, PLURALS[doc['kind']], doc['metadata']['name'])
    assert [d['kind'] for d in created] == ['Skyhook', 'DeploymentPolicy']


def test_the_nodewright_example_needs_the_announced_group(cluster):
    custom = kclient.CustomObjectsApi(cluster.api)
    with pytest.raises(ApiException) as info:
        _create(custom, _docs('gpu-node-tuning.yaml')[0])
    assert info.value.status == 404  # kubectl says: no matches for kind "NodeWright"
