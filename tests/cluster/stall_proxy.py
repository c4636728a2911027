# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A TCP proxy in front of the API server that can silently cut the connections it relays.

A watch whose connection is kept open but carries no more bytes (a NAT or load balancer that
dropped its state, a half-dead TCP path) is what ``cut_existing()`` makes of every connection
open at that moment: both sockets stay open, nothing is relayed any more either way, and the
client sees neither an event nor an end of stream. Connections opened afterwards are relayed
normally, so a client that gives up on a silent stream and connects again carries on.

TLS passes through untouched (bytes only): the API server's serving certificate is valid for
127.0.0.1, so a kubeconfig that names the proxy's 127.0.0.1 port with the cluster's CA and
token works as it is (``write_kubeconfig``).

    proxy = StallProxy(upstream_port).start()
    proxy.write_kubeconfig(cluster_kubeconfig, path)
    ...
    proxy.cut_existing()      # every open connection goes silent
    proxy.close()
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from pathlib import Path

import yaml


class _Pair:
    """One relayed connection: the client's socket and ours to the upstream."""

    def __init__(self, client, upstream):
        self.client = client
        self.upstream = upstream
        self.cut = False
        self.opened = time.monotonic()
        self.bytes = 0

    def peer(self, sock):
        return self.upstream if sock is self.client else self.client

    def close(self):
        for sock in (self.client, self.upstream):
            try:
                sock.close()
            except OSError:
                pass


class StallProxy:
    """Relays 127.0.0.1:<port> to 127.0.0.1:<upstream_port>, one selector thread for all connections."""

    def __init__(self, upstream_port, upstream_host='127.0.0.1'):
        self.upstream = (upstream_host, int(upstream_port))
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.selector = selectors.DefaultSelector()
        self.pairs = {}  # socket -> _Pair (both sockets of a pair)
        self.lock = threading.Lock()
        self.cuts = []  # (time, connections cut)
        self.accepted = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name='stall-proxy', daemon=True)

    @property
    def url(self):
        return f'https://127.0.0.1:{self.port}'

    def start(self):
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.thread.start()
        return self

    def cut_existing(self):
        """Make every connection open now a black hole (kept open, nothing relayed); returns how many."""
        with self.lock:
            pairs = {id(p): p for p in self.pairs.values() if not p.cut}
            for pair in pairs.values():
                pair.cut = True
                # Unregistered, not closed: the kernel keeps both connections established,
                # and whatever arrives stays unread in the buffers.
                for sock in (pair.client, pair.upstream):
                    try:
                        self.selector.unregister(sock)
                    except (KeyError, ValueError):
                        pass
            self.cuts.append((time.time(), len(pairs)))
            return len(pairs)

    def open_connections(self):
        """(relayed, cut) counts of the connections open now."""
        with self.lock:
            pairs = {id(p): p for p in self.pairs.values()}.values()
            return sum(1 for p in pairs if not p.cut), sum(1 for p in pairs if p.cut)

    def close(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        with self.lock:
            for pair in {id(p): p for p in self.pairs.values()}.values():
                pair.close()
            self.pairs.clear()
        self.listener.close()
        self.selector.close()

    def write_kubeconfig(self, kubeconfig, path):
        """A copy of kubeconfig (token, CA) whose server is this proxy; returns its path."""
        cfg = yaml.safe_load(Path(kubeconfig).read_text(encoding='utf-8'))
        for item in cfg.get('clusters') or []:
            item['cluster']['server'] = self.url
        path = Path(path)
        path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding='utf-8')
        path.chmod(0o600)
        return path

    # ------------------------------------------------------------------ the relay

    def _loop(self):
        while not self.stopping.is_set():
            for key, dummy in self.selector.select(timeout=0.2):
                if key.fileobj is self.listener:
                    self._accept()
                else:
                    self._relay(key.fileobj)

    def _accept(self):
        try:
            client, dummy = self.listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            client.close()  # the API server is down: the client sees its connection closed
            return
        for sock in (client, upstream):
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pair = _Pair(client, upstream)
        with self.lock:
            self.accepted += 1
            self.pairs[client] = pair
            self.pairs[upstream] = pair
            self.selector.register(client, selectors.EVENT_READ)
            self.selector.register(upstream, selectors.EVENT_READ)

    def _relay(self, sock):
        with self.lock:
            pair = self.pairs.get(sock)
            if pair is None or pair.cut:
                return
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b''
        if data:
            try:
                # small writes to loopback; a full buffer blocks this relay briefly, which is fine
                pair.peer(sock).setblocking(True)
                pair.peer(sock).sendall(data)
                pair.peer(sock).setblocking(False)
                pair.bytes += len(data)
                return
            except OSError:
                pass
        self._drop(pair)

    def _drop(self, pair):
        with self.lock:
            for sock in (pair.client, pair.upstream):
                self.pairs.pop(sock, None)
                try:
                    self.selector.unregister(sock)
                except (KeyError, ValueError):
                    pass
        pair.close()
