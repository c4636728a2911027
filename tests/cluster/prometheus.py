# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A real Prometheus for the alert gate and metrics tests, a Pushgateway, and an HTTPS proxy that wants a bearer token.

``Prometheus(workdir)``: started on a free port of 127.0.0.1 with a temporary TSDB,
``--web.enable-lifecycle`` and a rule evaluation every second; ``set_alert(name, firing)``
rewrites its rule file (an alert whose expression is ``vector(1)`` fires at the next
evaluation; without the rule it resolves) and POSTs ``/-/reload``; ``wait_alert`` waits until
the query API shows the change. The binary comes from tests/cluster/build.sh (``build.sh
prometheus``, built once per version into the cache like the cluster binaries). ``Prometheus(workdir,
scrape_configs=...)`` also scrapes; ``query`` runs an instant query through its HTTP API.

``Pushgateway(workdir)``: github.com/prometheus/pushgateway (``build.sh pushgateway``) on a free port of 127.0.0.1.

``BearerProxy(upstream, token, cert, key)``: an HTTPS reverse proxy (http.server + ssl) that
answers 401 unless ``Authorization: Bearer <token>`` is sent. ``make_tls(dir)`` writes a CA, a
server certificate for 127.0.0.1 signed by it, and a second CA that signed nothing (the
"wrong CA" of the tests), with the ``cryptography`` package ansible-core depends on.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import os
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import launcher

CLUSTER_DIR = Path(__file__).resolve().parent
ALERTS_QUERY = 'ALERTS{alertstate="firing"}'


def binary(target='prometheus'):
    """The cached binary of ``target`` (prometheus, pushgateway), built first (once per version) when missing."""
    version = launcher.versions()[f'{target.upper()}_VERSION']
    path = launcher.cache_dir() / f'{target}-{version}' / target
    if not os.access(path, os.X_OK):
        res = subprocess.run(['bash', str(CLUSTER_DIR / 'build.sh'), target], stdout=subprocess.DEVNULL,
                             check=False)
        if res.returncode != 0 or not os.access(path, os.X_OK):
            raise RuntimeError(f'tests/cluster/build.sh {target} failed (exit code {res.returncode})')
    return path


def _rules(alerts):
    rules = [{'alert': name, 'expr': 'vector(1)', 'labels': dict(labels)} for name, labels in sorted(alerts.items())]
    # JSON is YAML: no yaml dependency for a two-level document.
    return json.dumps({'groups': [{'name': 'gate-tests', 'interval': '1s', 'rules': rules}]}, indent=1)


def _stop(proc, log):
    """A server process of these tests ended: SIGTERM, SIGKILL after 10 s; its log closed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log.close()


class Prometheus:
    """A Prometheus process of its own; ``url`` is its base URL. ``scrape_configs``: its scrape jobs (none: it only
    evaluates the alert rules), scraped every ``scrape_interval``."""

    def __init__(self, workdir, scrape_configs=None, scrape_interval='15s'):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = launcher.free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        self.alerts = {}
        self.rules_file = self.dir / 'rules.yml'
        self.rules_file.write_text(_rules(self.alerts))
        (self.dir / 'prometheus.yml').write_text(json.dumps({
            'global': {'evaluation_interval': '1s', 'scrape_interval': scrape_interval},
            'rule_files': [str(self.rules_file)], 'scrape_configs': list(scrape_configs or [])}))
        self.log = open(self.dir / 'prometheus.log', 'wb')  # pylint: disable=consider-using-with
        self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
            [str(binary()), f'--config.file={self.dir / "prometheus.yml"}',
             f'--storage.tsdb.path={self.dir / "data"}', f'--web.listen-address=127.0.0.1:{self.port}',
             '--web.enable-lifecycle', '--log.level=warn'],
            stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self._wait(lambda: self._get('/-/ready', raw=True) == 200, 60, 'Prometheus ready')
        except Exception:
            self.stop()
            raise

    def _get(self, path, raw=False):
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as resp:
                return resp.status if raw else json.loads(resp.read())
        except (urllib.error.URLError, OSError):
            if self.proc.poll() is not None:
                raise RuntimeError(f'prometheus exited with {self.proc.returncode}; see {self.dir / "prometheus.log"}')
            return None

    def _wait(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f'timed out after {timeout}s waiting for {what} (log: {self.dir / "prometheus.log"})')
            time.sleep(0.2)

    def query(self, expr):
        """The result of the instant query ``expr`` (``GET /api/v1/query``): a list of ``{metric, value}``; raises
        on an error answer (a query the dashboards send must parse)."""
        url = self.url + '/api/v1/query?' + urllib.parse.urlencode({'query': expr})
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                answer = json.loads(resp.read())
        except urllib.error.HTTPError as exc:  # a bad query: 400 with the parser's error
            answer = json.loads(exc.read() or b'{}')
        if answer.get('status') != 'success':
            raise AssertionError(f'query {expr!r}: {answer}')
        return answer['data']['result']

    def wait_query(self, expr, predicate, timeout=60, what=None):
        """The result of ``expr`` once ``predicate(result)`` holds (the scrapes are seconds apart)."""
        found = []

        def check():
            found[:] = [self.query(expr)]
            return predicate(found[0])
        self._wait(check, timeout, what or f'{expr} to answer as wanted (last: {found[-1] if found else None})')
        return found[0]

    def firing(self):
        """Names of the firing alerts, as the query API reports them now."""
        answer = self._get('/api/v1/query?' + urllib.parse.urlencode({'query': ALERTS_QUERY})) or {}
        return sorted(s['metric'].get('alertname') for s in (answer.get('data') or {}).get('result') or [])

    def set_alert(self, name, firing=True, labels=None, wait=True):
        """Switch the alert ``name`` on (a rule that always fires) or off (no rule), and reload."""
        if firing:
            self.alerts[name] = labels or {}
        else:
            self.alerts.pop(name, None)
        self.rules_file.write_text(_rules(self.alerts))
        req = urllib.request.Request(self.url + '/-/reload', method='POST')
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200, resp.status
        if wait:
            self.wait_alert(name, firing)

    def wait_alert(self, name, firing=True, timeout=30):
        self._wait(lambda: (name in self.firing()) == firing, timeout, f'alert {name} firing={firing}')

    def stop(self):
        _stop(self.proc, self.log)


class Pushgateway:
    """A Pushgateway process of its own (tests/cluster/build.sh pushgateway), in memory; ``url`` its base URL,
    ``address`` its host:port for a scrape target."""

    def __init__(self, workdir):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = launcher.free_port()
        self.address = f'127.0.0.1:{self.port}'
        self.url = f'http://{self.address}'
        self.log = open(self.dir / 'pushgateway.log', 'wb')  # pylint: disable=consider-using-with
        self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
            [str(binary('pushgateway')), f'--web.listen-address={self.address}', '--log.level=warn'],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self._ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f'the Pushgateway did not start; see {self.dir / "pushgateway.log"}')
            time.sleep(0.1)

    def _ready(self):
        try:
            with urllib.request.urlopen(self.url + '/-/ready', timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def metrics(self):
        """Its own /metrics (what Prometheus scrapes), as text."""
        with urllib.request.urlopen(self.url + '/metrics', timeout=10) as resp:
            return resp.read().decode('utf-8')

    def groups(self):
        """The groups it holds (``GET /api/v1/metrics``): a list of their label sets."""
        with urllib.request.urlopen(self.url + '/api/v1/metrics', timeout=10) as resp:
            return [group['labels'] for group in json.loads(resp.read())['data']]

    def stop(self):
        _stop(self.proc, self.log)


# ---------------------------------------------------------------------------- TLS and the proxy

def _certificate(subject, issuer, public_key, signing_key, ca, ip=None):
    # pylint: disable-next=import-outside-toplevel
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes  # pylint: disable=import-outside-toplevel
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]),
                                        critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                                        critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def make_tls(workdir):
    """``{'ca', 'other_ca', 'cert', 'key'}``: PEM file paths; the server certificate is for 127.0.0.1."""
    # pylint: disable=import-outside-toplevel
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)

    def name(text):
        return x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, text)])

    def pem(cert):
        return cert.public_bytes(serialization.Encoding.PEM)
    ca_key, other_key, server_key = (ec.generate_private_key(ec.SECP256R1()) for dummy in range(3))
    ca = _certificate(name('gate-test CA'), name('gate-test CA'), ca_key.public_key(), ca_key, True)
    other = _certificate(name('other CA'), name('other CA'), other_key.public_key(), other_key, True)
    server = _certificate(name('127.0.0.1'), name('gate-test CA'), server_key.public_key(), ca_key, False, '127.0.0.1')
    paths = {k: workdir / f'{k}.pem' for k in ('ca', 'other_ca', 'cert', 'key')}
    paths['ca'].write_bytes(pem(ca))
    paths['other_ca'].write_bytes(pem(other))
    paths['cert'].write_bytes(pem(server))
    paths['key'].write_bytes(server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    return {k: str(v) for k, v in paths.items()}


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        if self.headers.get('Authorization') != f'Bearer {self.server.token}':
            self._answer(401, b'{"status":"error","errorType":"unauthorized","error":"bearer token required"}')
            return
        try:
            with urllib.request.urlopen(self.server.upstream + self.path, timeout=10) as resp:
                self._answer(resp.status, resp.read())
        except urllib.error.HTTPError as exc:
            self._answer(exc.code, exc.read())

    def _answer(self, status, body):
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass


class BearerProxy:
    """HTTPS on a free port of 127.0.0.1, forwarding GETs to ``upstream`` when the bearer token is right."""

    def __init__(self, upstream, token, cert, key):
        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _ProxyHandler)
        self.server.upstream, self.server.token = upstream, token
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f'https://127.0.0.1:{self.server.server_address[1]}'
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
