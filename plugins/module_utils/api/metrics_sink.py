# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Where a batch job's Prometheus metrics go: a Pushgateway (HTTP) or a node-exporter textfile. The text itself is
module_utils/contract/operator_metrics.py's.

* Pushgateway (github.com/prometheus/pushgateway, its README's API): ``PUT <url>/metrics/job/<job>{/<label>/<value>}``
  replaces every metric of that group (job and grouping labels) with the body, atomically: a push that fails leaves
  the group as it was, never half of it. ``DELETE`` of the same path removes the group. A value with a ``/`` (or an
  empty one) goes base64url-encoded as ``<label>@base64/<value>``. The Pushgateway adds the grouping labels to every
  series of the group, and ``push_time_seconds`` / ``push_failure_time_seconds`` per group.
* textfile (node-exporter's textfile collector): ``<dir>/<name>.prom``, written to a temporary file of the same
  directory (not ending ``.prom``, so never read half-written) and renamed over it.

Errors are ``SinkError`` with the whole message (which URL or file, what went wrong, what to check); nothing here
warns or fails a play: the caller decides.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import ssl
import tempfile

from urllib.error import HTTPError, URLError
from urllib.parse import quote
from urllib.request import HTTPRedirectHandler, HTTPSHandler, Request, build_opener

DEFAULT_JOB = 'nodewright-bridge'
DEFAULT_TIMEOUT = 10
CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
_ERROR_BODY_MAX = 300


class SinkError(Exception):
    """A push or write that did not happen; ``str()`` is the whole message."""


class Pushgateway(object):
    """A Pushgateway at ``url`` (its base URL); ``bearer_token``, ``ca_path`` (a CA bundle for https),
    ``validate_certs``, ``timeout`` (seconds of each request). ``opener``: a urllib opener (tests)."""

    def __init__(self, url, bearer_token=None, ca_path=None, validate_certs=True, timeout=DEFAULT_TIMEOUT,
                 opener=None):
        self.url = url.rstrip('/')
        self.bearer_token = bearer_token
        self.ca_path = ca_path
        self.validate_certs = validate_certs
        self.timeout = timeout
        self.opener = opener

    def __repr__(self):  # never the token
        return 'Pushgateway(%r)' % self.url

    def group_url(self, job, grouping=None):
        """``<url>/metrics/job/<job>/<label>/<value>...`` (grouping labels sorted by name)."""
        return self.url + group_path(job, grouping)

    def push(self, job, grouping, text):
        """Replace the group's metrics with ``text`` (PUT); returns the group URL. SinkError when it was not taken."""
        target = self.group_url(job, grouping)
        self._send('PUT', target, text.encode('utf-8'), 'push the metrics to')
        return target

    def delete(self, job, grouping):
        """Remove the group (DELETE; a group that does not exist is no error); returns the group URL."""
        target = self.group_url(job, grouping)
        self._send('DELETE', target, None, 'delete the metrics group at')
        return target

    def _opener(self):
        if self.opener is not None:
            return self.opener
        handlers = [_NoRedirect()]
        if self.url.startswith('https:'):
            handlers.append(HTTPSHandler(context=self._ssl_context()))
        return build_opener(*handlers)

    def _ssl_context(self):
        try:
            context = ssl.create_default_context(cafile=self.ca_path)
        except (OSError, ssl.SSLError) as exc:
            raise SinkError('the Pushgateway at %s: cannot read the CA file %s (ca_path): %s'
                            % (self.url, self.ca_path, exc))
        if not self.validate_certs:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def _send(self, method, target, body, what):
        headers = {}
        if body is not None:
            headers['Content-Type'] = CONTENT_TYPE
        if self.bearer_token:
            headers['Authorization'] = 'Bearer %s' % self.bearer_token
        where = 'cannot %s the Pushgateway: %s %s' % (what, method, target)
        request = Request(target, data=body, headers=headers, method=method)
        try:
            with self._opener().open(request, timeout=self.timeout) as resp:
                resp.read()
        except HTTPError as exc:
            raise SinkError(_http_error(where, exc))
        except URLError as exc:
            raise SinkError(_url_error(where, exc))
        except OSError as exc:  # a read timeout (socket.timeout) after the connection was made
            raise SinkError('%s: %s' % (where, exc or type(exc).__name__))


class _NoRedirect(HTTPRedirectHandler):
    """A redirect would carry the bearer token (and the body) to wherever it points: refused, the target named."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _http_error(where, exc):
    try:
        detail = ' '.join(exc.read().decode('utf-8', 'replace').split())  # one line: the Pushgateway lists errors
        if len(detail) > _ERROR_BODY_MAX:
            detail = detail[:_ERROR_BODY_MAX] + '...'
    except (OSError, ValueError, AttributeError):
        detail = ''
    detail = (': %s' % detail) if detail else ''
    if exc.code in (401, 403):
        return ('%s: HTTP %d %s: an authentication problem, the Pushgateway (or the proxy in front of it) refused the '
                'request; check the bearer token%s' % (where, exc.code, exc.reason, detail))
    if 300 <= exc.code < 400:
        return '%s: HTTP %d redirect to %s; give that URL' % (where, exc.code, exc.headers.get('Location'))
    return '%s: HTTP %d %s%s' % (where, exc.code, exc.reason, detail)


def _url_error(where, exc):
    reason = getattr(exc, 'reason', exc)
    if isinstance(reason, ssl.SSLCertVerificationError):
        return ("%s: TLS certificate verification failed (%s); give the CA that signed the server's certificate as "
                'ca_path' % (where, getattr(reason, 'verify_message', None) or reason))
    return '%s: %s' % (where, reason)


def _segment(label, value):
    """One ``/<label>/<value>`` of a group path: base64url (``<label>@base64``) for a value with ``/`` or empty."""
    value = str(value)
    if not value or '/' in value:
        encoded = base64.urlsafe_b64encode(value.encode('utf-8')).decode('ascii') or '='
        return '/%s@base64/%s' % (label, encoded)
    return '/%s/%s' % (label, quote(value, safe=''))


def group_path(job, grouping=None):
    """``/metrics/job/<job>{/<label>/<value>}`` for a Pushgateway group (grouping labels sorted by name)."""
    path = '/metrics' + _segment('job', job)
    for label in sorted(grouping or {}):
        path += _segment(label, grouping[label])
    return path


# ---------------------------------------------------------------------------- textfile


def textfile_path(directory, name):
    """``<directory>/<name>.prom``."""
    return os.path.join(directory, name + '.prom')


def write_textfile(directory, name, text):
    """Write ``text`` to ``<directory>/<name>.prom`` atomically (a temporary file, then a rename); returns the path."""
    target = textfile_path(directory, name)
    try:
        handle, temp = tempfile.mkstemp(dir=directory, prefix='.%s.' % name, suffix='.tmp')
    except OSError as exc:
        raise SinkError('cannot write the metrics file %s: %s' % (target, exc))
    try:
        with os.fdopen(handle, 'w') as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o644)
        os.rename(temp, target)
    except OSError as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise SinkError('cannot write the metrics file %s: %s' % (target, exc))
    return target


def remove_textfile(directory, name):
    """Remove ``<directory>/<name>.prom``; True when there was one."""
    target = textfile_path(directory, name)
    try:
        os.unlink(target)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SinkError('cannot remove the metrics file %s: %s' % (target, exc))
    return True
