# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Headless Chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``), stdlib only.

Chromium reads commands from its file descriptor 3 and writes responses and events to 4, each a
JSON message ended by a NUL byte. ``Browser`` starts it, opens one page (a target attached in flat
mode: commands carry its ``sessionId``), and offers what the timeline tests need: load a file and
wait for its load event, evaluate JavaScript, take a screenshot; ``png_info`` checks a PNG.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib

CHROMIUM_NAMES = ('chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable')


def find_chromium():
    """The Chromium executable ($CHROMIUM or the first of CHROMIUM_NAMES on PATH), or None."""
    explicit = os.environ.get('CHROMIUM')
    if explicit:
        return explicit
    return next((path for path in (shutil.which(n) for n in CHROMIUM_NAMES) if path), None)


class CDPError(Exception):
    pass


class Browser:
    """One headless Chromium with one page. Use as a context manager; ``close()`` ends the process."""

    def __init__(self, executable, width=1400, height=900, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix='nw-chromium-')
        # our ends stay here; Chromium's ends become its fds 3 (commands) and 4 (responses)
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # above 4, so that dup2 onto 3 and 4 in the child never overwrites the other one
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def on_fds():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)
        cmd = [executable, '--headless', '--no-sandbox', '--disable-gpu', '--user-data-dir=%s' % self.profile,
               '--remote-debugging-pipe', '--no-first-run', '--no-default-browser-check', '--disable-extensions',
               '--hide-scrollbars', '--mute-audio', '--window-size=%d,%d' % (width, height), 'about:blank']
        self.log = tempfile.TemporaryFile()  # pylint: disable=consider-using-with
        # pylint: disable-next=subprocess-popen-preexec-fn,consider-using-with
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     pass_fds=(3, 4), preexec_fn=on_fds)
        os.close(child_in)
        os.close(child_out)
        self.buffer = b''
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call('Target.createTarget', url='about:blank')['targetId']
        self.session = self.call('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        self.call('Page.enable')
        self.call('Runtime.enable')
        self.call('Emulation.setDeviceMetricsOverride', width=width, height=height, deviceScaleFactor=1, mobile=False)

    # ------------------------------------------------------------------ the protocol

    def _read_message(self, deadline):
        while b'\0' not in self.buffer:
            if time.monotonic() > deadline:
                raise CDPError('no message from Chromium within %ss' % self.timeout)
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise CDPError('Chromium closed its pipe (exit %s): %s' % (self.proc.poll(), self.output()[-2000:]))
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b'\0', 1)
        return json.loads(raw)

    def call(self, method, **params):
        """Send one command (to the page once attached); return its result, keep the events that came meanwhile."""
        self.next_id += 1
        message = {'id': self.next_id, 'method': method, 'params': params}
        if self.session and not method.startswith('Target.'):
            message['sessionId'] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b'\0')
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise CDPError('%s: %s' % (method, reply['error']))
                return reply.get('result') or {}
            if 'method' in reply:
                self.events.append(reply)

    def wait_event(self, method, timeout=None):
        """The first event ``method`` (already received or to come), removed from the queue."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for index, event in enumerate(self.events):
                if event['method'] == method:
                    return self.events.pop(index)
            self.events.append(self._read_message(deadline))

    # ------------------------------------------------------------------ what the tests do

    def load(self, url):
        """Navigate and wait for the load event."""
        self.events = [e for e in self.events if e['method'] != 'Page.loadEventFired']
        result = self.call('Page.navigate', url=url)
        if result.get('errorText'):
            raise CDPError('navigation to %s failed: %s' % (url, result['errorText']))
        return self.wait_event('Page.loadEventFired')

    def evaluate(self, expression):
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.call('Runtime.evaluate', expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in result:
            raise CDPError('JavaScript failed: %s' % json.dumps(result['exceptionDetails'])[:2000])
        return result['result'].get('value')

    def screenshot(self, full_page=True):
        """PNG bytes of the page (all of it when ``full_page``)."""
        params = {'format': 'png'}
        if full_page:
            params['captureBeyondViewport'] = True
            size = self.call('Page.getLayoutMetrics')['cssContentSize']
            params['clip'] = {'x': 0, 'y': 0, 'width': size['width'], 'height': size['height'], 'scale': 1}
        return base64.b64decode(self.call('Page.captureScreenshot', **params)['data'])

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors='replace')

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.session = None
                    self.call('Browser.close')
                except (CDPError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self.to_browser, self.from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def png_info(data):
    """``(width, height, distinct byte values of the image data)`` of PNG bytes; raises ValueError if not a PNG."""
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG (signature %r)' % data[:8])
    pos, idat, width, height = 8, b'', None, None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if zlib.crc32(kind + body) & 0xffffffff != struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])[0]:
            raise ValueError('bad CRC in chunk %r' % kind)
        if kind == b'IHDR':
            width, height = struct.unpack('>II', body[:8])
        elif kind == b'IDAT':
            idat += body
        elif kind == b'IEND':
            break
        pos += 12 + length
    if width is None or not idat:
        raise ValueError('PNG without IHDR or IDAT')
    return width, height, len(set(zlib.decompress(idat)))
