# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Skyhook CRs in the test cluster, for the module tests."""

from __future__ import annotations

import copy
import uuid

from kubernetes import client as kclient

GROUP, VERSION, PLURAL = 'skyhook.nvidia.com', 'v1alpha1', 'skyhooks'
PKG_IMAGE = 'registry.local/nodewright/tuning'
FAIL_PKG_IMAGE = 'registry.local/nodewright/fail-tuning'  # "fail" in the image: its copy init container fails


def skyhook(name, packages, selector=None, **spec):
    body = {'nodeSelectors': {'matchLabels': selector or {'nodewright.bridge/test-node': 'true'}}, 'packages': packages}
    body.update(spec)
    return {'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body}


def package(version='1.2.0', image=PKG_IMAGE, **extra):
    body = {'version': version, 'image': image}
    body.update(extra)
    return body


class CRs:
    """Creates Skyhook CRs with unique names and deletes them afterwards."""

    def __init__(self, cluster):
        self.custom = kclient.CustomObjectsApi(cluster.api)
        self.names = []

    def create(self, packages, prefix='cr', **spec):
        name = f'{prefix}-{uuid.uuid4().hex[:6]}'
        doc = skyhook(name, copy.deepcopy(packages), **spec)
        created = self.custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, doc)
        self.names.append(name)
        return created

    def close(self):
        for name in self.names:
            try:
                self.custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
            except kclient.ApiException:
                pass
