# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""One process that runs the node sequences of a play for the workers that wait on it.

Why: Ansible runs each host's task in a worker, a fork of ``ansible-playbook``, and a
``node_update`` task lives as long as its node's update, so with forks 50 there are 50
workers at once. What a worker touches after the fork becomes its own memory: for the node
sequence (the API client, its TLS connection, the planner, the stages) about 7 MiB per
worker, on top of what every Ansible worker costs (about 12 MiB on ansible-core 2.19). Run
in one process, the sequences share one client, one connection pool and one copy of the
code's memory; the workers only wait (docs/in-process.md, docs/dev/benchmarks.md).

Life cycle:

* the budgeted strategy starts the engine (``start``) in ``ansible-playbook`` when a play
  begins, before its workers fork, and stops it when the play ends (``Engine.stop``);
* the engine is a fork of ``ansible-playbook``: it has the modules loaded, the environment and
  the working directory of the run; it listens on a Unix socket in a directory only this user
  can open, whose address reaches the workers in ``NODEWRIGHT_BRIDGE_ENGINE`` with the pid of
  ``ansible-playbook`` (a process that is not one of its workers never uses it);
* it ends on SIGINT or SIGTERM (Ctrl-C reaches it with ``ansible-playbook``: the nodes stop
  where they are, as killed workers do), and when ``ansible-playbook`` is gone (the end of a
  pipe that only the parent holds);
* a worker sends one request (the validated options of ``node_update``, check mode, diff)
  and waits for the result. When a worker goes away before its result (a task ``timeout:``, a
  killed worker), the engine stops that node's sequence before its next step.

Anything the engine cannot serve (no engine, a task with ``environment:``, which is
per-task while the engine has one environment) runs in the worker as before.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import select
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time
import traceback

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.node_sequence import NodeSequence

ADDRESS_ENV = 'NODEWRIGHT_BRIDGE_ENGINE'
# Set to 0 / false to run every node_update in its own worker (as before the engine).
ENGINE_ENV = 'NODEWRIGHT_BRIDGE_ENGINE_ENABLED'

# Connections the engine's one API client keeps: every node in flight has its requests and
# watches; urllib3 only opens as many as are used at once.
ENGINE_POOL_SIZE = 1024
_HEADER = struct.Struct('!Q')
STOP_TIMEOUT = 5.0


class Cancelled(BaseException):
    """The worker that asked for a sequence is gone: stop before the next step (BaseException, so
    that a step's ``except Exception`` does not turn it into a failure)."""


def step_runner(check_mode, diff, cancelled=None, live_crs=None, session=None):
    """``run_step(module, args)`` for NodeSequence: each step in this process, through its module's code."""
    def run_step(module, step_args):
        if cancelled is not None and cancelled():
            raise Cancelled()
        # the code was loaded before the fork where a play started (venue.PlayVenue.start); else on first use here
        return in_process.run(cluster_modules.MODULES[module].fqcn, cluster_modules.MODULES[module].import_code(),
                              step_args, check_mode=check_mode, diff=diff, live_crs=live_crs, session=session)
    return run_step


class LiveCRsByConnection(object):
    """The engine's kube.LiveCRs, one per connection (the nodes of a play share one).

    ``session``: the engine's kube.KubeSession; every Kube made with one of these LiveCRs (the steps'
    clients, the status keepers') uses it, so that all the nodes share one client per connection.
    """

    def __init__(self, session=None):
        self.session = session
        self.lock = threading.Lock()
        self.by_key = {}

    def get(self, connection):
        key = json.dumps(connection, sort_keys=True, default=str)
        with self.lock:
            if key not in self.by_key:
                self.by_key[key] = kube.LiveCRs(dict(connection), session=self.session)
            return self.by_key[key]


def run_sequence(params, connection, check_mode, diff, cancelled=None, keepers=None, live_crs=None):
    """One node's sequence in this process (a wave's packages in threads); never raises but Cancelled.

    ``keepers``: the engine's status keepers (one per CR, shared by its nodes); None: the node's own.
    ``live_crs``: the engine's kube.LiveCRs for ``connection``: every step reads the CR from its watch.
    """
    # one KubeSession for the node's steps, package threads and status write: the engine's (its live CRs'), or, in a
    # worker, the sequence's own (one client, the node copies and locks, a refusal warned once)
    session = live_crs.session if live_crs is not None else kube.KubeSession()
    try:
        return NodeSequence(params, connection, step_runner(check_mode, diff, cancelled, live_crs, session), parallel=True,
                            keepers=keepers, check_mode=check_mode, session=session).run()
    except Cancelled:
        raise
    except Exception as exc:  # pylint: disable=broad-except
        return {'failed': True, 'exception': traceback.format_exc(),
                'msg': 'node_update of %s failed in the controller process: %s: %s' % (params.get('node'), type(exc).__name__, exc)}


# ---------------------------------------------------------------------- wire

def _send(sock, value):
    data = json.dumps(value).encode('utf-8')
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock, size):
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError('connection closed')
        chunks.append(chunk)
        left -= len(chunk)
    return b''.join(chunks)


def _recv(sock):
    size = _HEADER.unpack(_recv_exact(sock, _HEADER.size))[0]
    return json.loads(_recv_exact(sock, size).decode('utf-8'))


def _peer_gone(sock):
    """True when the other end closed the connection (a worker that ended without its result)."""
    try:
        readable = select.select([sock], [], [], 0)[0]
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b''
    except (OSError, ValueError):
        return True


# ---------------------------------------------------------------------- worker side

def enabled():
    """Whether sequences may run in an engine: the client imports, and neither switch is off."""
    # with cluster tasks off the in-process path (NODEWRIGHT_BRIDGE_IN_PROCESS=0) there is no engine either
    return kube.has_kubernetes() and in_process.env_switch(in_process.IN_PROCESS_ENV) and in_process.env_switch(ENGINE_ENV)


def address():
    """The engine's socket for this process, or None: only the ``ansible-playbook`` that started it (its task
    threads, plugin_utils/execution/task_threads.py) and its direct children (its workers) use it; a nested run inherits
    the variable, not the engine."""
    value = os.environ.get(ADDRESS_ENV) or ''
    owner, sep, path = value.partition(':')
    if not sep or not path or not owner.isdigit() or int(owner) not in (os.getppid(), os.getpid()):
        return None
    return path


def submit(path, params, connection, check_mode, diff):
    """The node's sequence run by the engine: its result, or None when no engine answers (run it here)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
            _send(sock, {'params': params, 'connection': connection, 'check_mode': check_mode, 'diff': diff})
        except (OSError, EOFError):
            return None
        try:
            return _recv(sock)
        except (OSError, EOFError, ValueError) as exc:
            return {'failed': True, 'msg': 'node_update of %s: the controller\'s sequence engine (%s) ended before the '
                                           'node\'s result (%s); the node keeps the state it recorded, a re-run resumes it'
                                           % (params.get('node'), path, exc)}
    finally:
        sock.close()


# ---------------------------------------------------------------------- engine side

class Engine(object):
    """The parent's handle on a running engine."""

    def __init__(self, pid, directory, path, parent_end):
        self.pid = pid
        self.directory = directory
        self.path = path
        self.parent_end = parent_end

    def stop(self):
        """End the engine (its sequences end with it) and remove its socket; idempotent."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except OSError:
                pass
            deadline = time.time() + STOP_TIMEOUT
            while True:
                try:
                    done, dummy = os.waitpid(self.pid, os.WNOHANG)
                except OSError:
                    break
                if done:
                    break
                if time.time() > deadline:
                    try:
                        os.kill(self.pid, signal.SIGKILL)
                        os.waitpid(self.pid, 0)
                    except OSError:
                        pass
                    break
                time.sleep(0.02)
            self.pid = None
        if self.parent_end is not None:
            if self.parent_end in _PARENT_END:
                _PARENT_END.remove(self.parent_end)
            try:
                os.close(self.parent_end)
            except OSError:
                pass
            self.parent_end = None
        if os.environ.get(ADDRESS_ENV, '').endswith(':' + self.path):
            del os.environ[ADDRESS_ENV]
        shutil.rmtree(self.directory, ignore_errors=True)


def start(fork_lock=None):
    """Fork the engine from this process (ansible-playbook); returns an Engine, or None if it cannot start.

    ``fork_lock``: a lock to hold while forking (Ansible's display lock, as its workers do, so that
    no other thread holds it in the child).
    """
    directory = tempfile.mkdtemp(prefix='nodewright-engine-')  # 0700: only this user can connect
    path = os.path.join(directory, 'socket')
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(256)
        engine_end, parent_end = os.pipe()
    except OSError:
        listener.close()
        shutil.rmtree(directory, ignore_errors=True)
        return None
    if fork_lock is not None:
        with fork_lock:
            pid = os.fork()
    else:
        pid = os.fork()
    if pid == 0:  # the engine
        code = 1
        try:
            os.close(parent_end)  # only ansible-playbook holds it (earlier engines' ends: the fork hook)
            _serve(listener, engine_end)
            code = 0
        except SystemExit:
            code = 0
        except BaseException:  # pylint: disable=broad-except
            pass
        finally:
            os._exit(code)  # never return into ansible-playbook's code
    os.close(engine_end)
    listener.close()
    # workers forked from now on inherit the address, and close the parent's end of the pipe
    _PARENT_END[:] = [parent_end]
    if not _FORK_HOOK:
        os.register_at_fork(after_in_child=_close_parent_end)
        _FORK_HOOK.append(True)
    os.environ[ADDRESS_ENV] = '%d:%s' % (os.getpid(), path)
    return Engine(pid, directory, path, parent_end)


# The parent's end of the current engine's pipe. Only ansible-playbook may hold it, so that the
# engine sees the pipe close when ansible-playbook is gone, whatever its workers do. Process state by
# nature: os.register_at_fork registers a hook for the life of the process (it cannot be removed).
_PARENT_END = []
_FORK_HOOK = []


class EngineState(object):
    """What the engine's sequences share, made in the engine when it starts serving (never in ansible-playbook).

    ``session``: the API clients, node cache and node locks, one for every node in flight, with the engine's
    pool; ``live_crs``: the CRs' watches by connection; ``keepers``: the status keepers, one per CR, shared
    by the sequences of its nodes (a write per burst of transitions, not per transition).
    """

    def __init__(self, pool_size=ENGINE_POOL_SIZE):
        self.session = kube.KubeSession(pool_size=pool_size)
        self.live_crs = LiveCRsByConnection(self.session)
        self.keepers = status_keeper.Keepers(live_crs_for=self.live_crs.get)


def _close_parent_end():
    while _PARENT_END:
        try:
            os.close(_PARENT_END.pop())
        except OSError:
            pass


def _detach_stdio():
    """As an Ansible worker does: nothing the engine's code prints reaches the terminal."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _serve(listener, parent_end):
    _detach_stdio()
    stopping = threading.Event()

    def stop(*dummy):
        stopping.set()
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch_parent():
        try:
            while os.read(parent_end, 1):
                pass
        except OSError:
            pass
        if not stopping.is_set():
            os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch_parent, name='parent-watch', daemon=True).start()
    state = EngineState()
    # the kubeconfig loader's certificate files live as long as the engine's one client
    with kube.own_temp_files():
        try:
            while not stopping.is_set():
                try:
                    conn, dummy = listener.accept()
                except OSError as exc:
                    if exc.errno == errno.EINTR:
                        continue
                    raise
                threading.Thread(target=_serve_one, args=(conn, state), name='node-sequence', daemon=True).start()
        finally:
            # the play ends (or the run is stopped): the last transitions' status write is not left
            # to a keeper thread that dies with the engine (Engine.stop waits STOP_TIMEOUT for it)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            state.keepers.write_pending()


def _serve_one(conn, state):
    try:
        request = _recv(conn)
        try:
            result = run_sequence(request['params'], request['connection'], request.get('check_mode', False),
                                  request.get('diff', False), cancelled=lambda: _peer_gone(conn), keepers=state.keepers,
                                  live_crs=state.live_crs.get(request['connection']))
        except Cancelled:
            return
        result['ran_in'] = 'sequence engine'
        _send(conn, result)
    except (OSError, EOFError, ValueError, KeyError):
        pass  # the worker is gone or sent nothing usable: it reports its own failure
    finally:
        conn.close()
