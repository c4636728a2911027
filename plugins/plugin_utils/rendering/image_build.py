# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Images built and pushed with podman on the controller (nodewright.bridge.role_package): the one place the
collection runs podman. A build context is a directory written here with fixed modes, so the same inputs give the
same layer; builds use ``--timestamp 0`` (no build time in the image), so the same context gives the same image.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shutil
import subprocess


class ImageBuildError(Exception):
    """podman failed; the message has the command and the end of its output."""


class Podman(object):
    """podman, as the controller's user runs it (``command``: the executable)."""

    def __init__(self, command='podman'):
        self.command = command
        if not shutil.which(command):
            raise ImageBuildError('%s: not found (role packages are built with podman: install it, for example '
                                  'apt-get install podman)' % command)

    def _run(self, args, check=True, timeout=3600):
        cmd = [self.command] + list(args)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise ImageBuildError('%s failed (rc %d): %s' % (' '.join(cmd), proc.returncode, proc.stdout[-4000:]))
        return proc

    def inspect(self, ref):
        """The image's inspect record, or None when podman's storage has no such image."""
        proc = self._run(['image', 'inspect', ref], check=False)
        if proc.returncode != 0:
            return None
        found = json.loads(proc.stdout)
        return found[0] if found else None

    def pull(self, ref, tls_verify=True):
        """Pull ``ref`` from its registry; False when it cannot (no such image or tag, no registry, no right)."""
        return self._run(['pull', '--quiet', '--tls-verify=%s' % str(bool(tls_verify)).lower(), ref], check=False,
                         timeout=1800).returncode == 0

    def build(self, context, ref):
        """Build ``context`` (with its Containerfile) as ``ref``; returns the build's output."""
        return self._run(['build', '--timestamp', '0', '--layers', '--pull=missing', '-f',
                          os.path.join(context, 'Containerfile'), '-t', ref, context]).stdout

    def push(self, ref, tls_verify=True):
        """Push ``ref`` to its registry; returns the manifest digest the registry has."""
        digest_file = '%s.digest' % ref.replace('/', '_').replace(':', '_')
        path = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'nodewright-%d-%s' % (os.getpid(), digest_file))
        try:
            self._run(['push', '--tls-verify=%s' % str(bool(tls_verify)).lower(), '--digestfile', path, ref])
            with open(path) as handle:
                return handle.read().strip()
        finally:
            if os.path.exists(path):
                os.remove(path)

    def remove(self, ref):
        self._run(['image', 'rm', ref], check=False)


def write_tree(root, files):
    """Write ``files`` (path -> bytes or text, ``(content, executable)`` tuples too) under ``root`` with fixed modes
    (0644, 0755 for executables and directories) and times, so that the same files give the same layer."""
    for path in sorted(files):
        content = files[path]
        executable = False
        if isinstance(content, tuple):
            content, executable = content
        target = os.path.join(root, path)
        parent = os.path.dirname(target)
        if not os.path.isdir(parent):
            os.makedirs(parent)
        with open(target, 'wb') as out:
            out.write(content if isinstance(content, bytes) else content.encode('utf-8'))
        os.chmod(target, 0o755 if executable else 0o644)
        os.utime(target, (0, 0))
    for directory, dirs, dummy in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(directory, name), 0o755)
            os.utime(os.path.join(directory, name), (0, 0))


def tree_digest(files, *extra):
    """A digest of ``files`` (as write_tree takes them) and ``extra`` strings: what goes into an image."""
    digest = hashlib.sha256()
    for part in extra:
        digest.update(part.encode('utf-8') + b'\0')
    for path in sorted(files):
        content = files[path]
        executable = False
        if isinstance(content, tuple):
            content, executable = content
        data = content if isinstance(content, bytes) else content.encode('utf-8')
        digest.update(path.encode('utf-8') + (b'\1' if executable else b'\0') + hashlib.sha256(data).digest())
    return digest.hexdigest()
