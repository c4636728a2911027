# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The kubelet's log endpoint for the fake nodes, so that pods/log works through the API server.

The kube-apiserver serves pods/log (``kubectl logs``, ``read_namespaced_pod_log``)
by proxying to ``https://<node InternalIP>:<kubeletEndpoint port>/containerLogs/<ns>/<pod>/<container>``.
kwok reports one port for all nodes it manages (``--node-port``) and this
process answers there. It is bound to 0.0.0.0, because every node has its own
127.1.x.y address and one socket must take connections to all of them, but it
closes any connection that was not addressed to a loopback address.

No container runs, so the text is made up from the pod's status, the way a
kubelet picks which container instance to read (see container_log()):

    nodewright-bridge fake log: pod <namespace>/<pod> container <container> image <image>
    <lines of the nodewright.bridge/fake-log annotation for this container, if any>
    stage completed: exit 0          (terminated with exit code 0)
    stage failed: exit <code>        (terminated with another exit code)
    container running                (running)

Run by launcher.py as the component "kubelet-logs" (run with python, no shebang on purpose):
    python tests/cluster/kubelet_logs.py --port P --cert C --key K --kubeconfig KC
"""

from __future__ import annotations

import argparse
import base64
import datetime
import http.server
import ipaddress
import json
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

# The exact text; helpers.py re-exports these for tests.
LOG_HEADER = 'nodewright-bridge fake log: pod {namespace}/{pod} container {container} image {image}'
LOG_COMPLETED = 'stage completed: exit 0'
LOG_FAILED = 'stage failed: exit {exit_code}'
LOG_RUNNING = 'container running'
# Optional pod annotation: a JSON object {"<container>": "<text>"}; the text
# is put between the header and the last line of that container's log.
FAKE_LOG_ANNOTATION = 'nodewright.bridge/fake-log'


def status_line(exit_code=None):
    """The last line of a log: exit_code None means the container is running."""
    if exit_code is None:
        return LOG_RUNNING
    return LOG_COMPLETED if int(exit_code) == 0 else LOG_FAILED.format(exit_code=int(exit_code))


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def expected_log(namespace, pod, container, image, exit_code=None, extra=None):
    """The exact log text (without timestamps) of one container instance.

    exit_code: the exit code of the instance that is read (None: running)
    extra:     the container's text from the nodewright.bridge/fake-log annotation
    """
    lines = [LOG_HEADER.format(namespace=namespace, pod=pod, container=container, image=image)]
    if extra:
        lines += str(extra).splitlines()
    lines.append(status_line(exit_code))
    return ''.join(line + '\n' for line in lines)


# --------------------------------------------------------------------------
# choosing the instance and rendering it (pure: pod is the pod as JSON)

class LogError(Exception):
    """A log request the kubelet refuses; status is the HTTP status it answers with."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _find(pod, container):
    """(spec, status) of a container, init container or ephemeral container; None where missing."""
    spec, status = pod.get('spec') or {}, pod.get('status') or {}
    found_spec = None
    for key in ('containers', 'initContainers', 'ephemeralContainers'):
        found_spec = found_spec or next((c for c in spec.get(key) or [] if c.get('name') == container), None)
    found_status = None
    for key in ('containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'):
        found_status = found_status or next((c for c in status.get(key) or [] if c.get('name') == container), None)
    return found_spec, found_status


def pick_instance(pod, container, previous=False):
    """The state of the container instance whose log is read, following the kubelet.

    Returns ('running', state) or ('terminated', state) with the state dict
    (startedAt, exitCode, ...). Raises LogError(400) where the kubelet does:
    a waiting container that never ran, or previous=True without a
    terminated previous instance. Unlike the kubelet, containerIDs are not
    required (kwok sets none).
    """
    name = (pod.get('metadata') or {}).get('name', '')
    dummy, cstatus = _find(pod, container)
    if cstatus is None:
        raise LogError(400, f'container "{container}" in pod "{name}" is not available')
    state = cstatus.get('state') or {}
    last = (cstatus.get('lastState') or {}).get('terminated')
    if previous:
        if not last:
            raise LogError(400, f'previous terminated container "{container}" in pod "{name}" not found')
        return 'terminated', last
    if state.get('running'):
        return 'running', state['running']
    if state.get('terminated'):
        return 'terminated', state['terminated']
    if last:
        # e.g. CrashLoopBackOff: the kubelet shows the instance that failed
        return 'terminated', last
    if state.get('waiting'):
        reason = state['waiting'].get('reason') or ''
        raise LogError(400, f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    raise LogError(400, f'container "{container}" in pod "{name}" is waiting to start - no logs yet')


def _parse_time(value):
    """An RFC 3339 time as an aware datetime (Python 3.10's fromisoformat does not take 'Z')."""
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))


def _stamp(when):
    """The kubelet's timestamp format (nanoseconds, UTC)."""
    when = when.astimezone(datetime.timezone.utc)
    return when.strftime('%Y-%m-%dT%H:%M:%S.') + f'{when.microsecond * 1000:09d}Z'


def _extra_text(pod, container):
    raw = ((pod.get('metadata') or {}).get('annotations') or {}).get(FAKE_LOG_ANNOTATION)
    if not raw:
        return None
    try:
        texts = json.loads(raw)
    except ValueError:
        return None
    return texts.get(container) if isinstance(texts, dict) else None


def _first(query, key):
    values = query.get(key) or []
    return values[0] if values else None


def container_log(pod, container, query=None, now=None):
    """The log text the kubelet would send for a pods/log request; raises LogError.

    query: the request's query parameters as from urllib.parse.parse_qs
    (previous, timestamps, sinceSeconds, sinceTime, tailLines, limitBytes,
    stream; follow is accepted and ends with the text).
    """
    query = query or {}
    meta = pod.get('metadata') or {}
    previous = _first(query, 'previous') == 'true'
    kind, state = pick_instance(pod, container, previous)
    cspec, dummy = _find(pod, container)
    image = (cspec or {}).get('image', '')
    now = now or datetime.datetime.now(datetime.timezone.utc)
    started = _parse_time(state.get('startedAt')) or _parse_time((pod.get('status') or {}).get('startTime')) or now
    finished = _parse_time(state.get('finishedAt')) or started
    exit_code = state.get('exitCode', 0) if kind == 'terminated' else None
    text = expected_log(meta.get('namespace', ''), meta.get('name', ''), container, image, exit_code,
                        _extra_text(pod, container))
    lines = text.splitlines()
    stamps = [started] * (len(lines) - 1) + [finished if kind == 'terminated' else started]

    # Every line goes to stdout.
    if (_first(query, 'stream') or 'All') == 'Stderr':
        return ''
    since = None
    if _first(query, 'sinceSeconds'):
        since = now - datetime.timedelta(seconds=int(_first(query, 'sinceSeconds')))
    since_time = _parse_time(_first(query, 'sinceTime'))
    if since_time and (since is None or since_time > since):
        since = since_time
    entries = [(s, line) for s, line in zip(stamps, lines) if since is None or s >= since]
    tail = _first(query, 'tailLines')
    if tail is not None and int(tail) >= 0:
        entries = entries[len(entries) - min(int(tail), len(entries)):]
    timestamps = _first(query, 'timestamps') == 'true'
    out = ''.join((f'{_stamp(s)} ' if timestamps else '') + line + '\n' for s, line in entries)
    limit = _first(query, 'limitBytes')
    if limit is not None:
        out = out.encode()[:max(0, int(limit))].decode(errors='ignore')
    return out


# --------------------------------------------------------------------------
# the server

class ApiReader:
    """Reads pods from the API server with the admin credentials of a kubeconfig (stdlib only)."""

    def __init__(self, kubeconfig):
        # pylint: disable-next=import-outside-toplevel
        import yaml  # only the server needs it; the helpers import this module for the text
        with open(kubeconfig, encoding='utf-8') as handle:
            cfg = yaml.safe_load(handle)
        cluster = cfg['clusters'][0]['cluster']
        self.server = cluster['server'].rstrip('/')
        self.token = cfg['users'][0]['user']['token']
        self.ctx = ssl.create_default_context(cadata=base64.b64decode(cluster['certificate-authority-data']).decode())

    def get_pod(self, namespace, name):
        """The pod as a dict, or None if there is none."""
        url = (f'{self.server}/api/v1/namespaces/{urllib.parse.quote(namespace, safe="")}'
               f'/pods/{urllib.parse.quote(name, safe="")}')
        req = urllib.request.Request(url, headers={'Authorization': f'Bearer {self.token}', 'Accept': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=10, context=self.ctx) as resp:
                return json.loads(resp.read().decode())
        except urllib.error.HTTPError as exc:
            with exc:
                if exc.code == 404:
                    return None
                raise


class Handler(http.server.BaseHTTPRequestHandler):
    """GET /healthz and GET /containerLogs/<namespace>/<pod>/<container>."""

    protocol_version = 'HTTP/1.1'
    server_version = 'nodewright-bridge-kubelet-logs'

    def do_GET(self):  # pylint: disable=invalid-name
        """Answer one request."""
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split('/')[1:]]
        if parts == ['healthz']:
            self._reply(200, 'ok')
            return
        if len(parts) != 4 or parts[0] != 'containerLogs' or not all(parts):
            self._reply(404, '404 page not found\n')
            return
        namespace, name, container = parts[1:]
        try:
            pod = self.server.api.get_pod(namespace, name)
            if pod is None:
                raise LogError(404, f'pod "{name}" does not exist')
            text = container_log(pod, container, urllib.parse.parse_qs(url.query))
        except LogError as exc:
            self._reply(exc.status, str(exc))
            return
        except (OSError, ValueError) as exc:
            self._reply(500, f'reading pod {namespace}/{name}: {exc}')
            return
        self._reply(200, text)

    def _reply(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header('Content-Type', 'text/plain; charset=utf-8')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        """One line per request on stderr (the component log)."""
        sys.stderr.write(f'{self.address_string()} {format % args}\n')


class Server(http.server.ThreadingHTTPServer):
    """HTTPS, one thread per connection, loopback destinations only."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, ssl_ctx, api):
        self.ssl_ctx = ssl_ctx
        self.api = api
        super().__init__(address, Handler)

    def verify_request(self, request, client_address):
        """Bound to 0.0.0.0 to reach every 127.x.y.z node address; answer nothing else."""
        try:
            return ipaddress.ip_address(request.getsockname()[0]).is_loopback
        except (OSError, ValueError):
            return False

    def finish_request(self, request, client_address):
        """TLS handshake in the connection's own thread, so a slow client blocks nobody else."""
        request.settimeout(30)
        conn = self.ssl_ctx.wrap_socket(request, server_side=True)  # takes over the socket
        try:
            super().finish_request(conn, client_address)
        finally:
            conn.close()

    def handle_error(self, request, client_address):
        """A broken connection is one log line, not a traceback."""
        sys.stderr.write(f'{client_address[0]}: connection error: {sys.exc_info()[1]!r}\n')


def main(argv=None):
    """Serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--address', default='0.0.0.0')
    parser.add_argument('--cert', required=True)
    parser.add_argument('--key', required=True)
    parser.add_argument('--kubeconfig', required=True)
    args = parser.parse_args(argv)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server = Server((args.address, args.port), ctx, ApiReader(args.kubeconfig))
    sys.stderr.write(f'kubelet-logs: serving https://{args.address}:{args.port}/containerLogs/\n')
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
