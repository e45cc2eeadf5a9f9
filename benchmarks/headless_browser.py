r"""A headless Chromium driven over the DevTools protocol, with no package
beyond the standard library: the browser is started with
``--remote-debugging-pipe`` and reads commands from file descriptor 3 and
writes answers and events to 4, each a JSON message ended by a NUL byte.

Used by the report's browser test (``tests/report/test_browser.py``) and
by ``benchmarks/report_screenshots.py``: open a page, run script in it,
take a screenshot, and collect what the page logs as errors.
"""
from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional, Union

__all__ = ['find_chromium', 'Browser', 'BrowserError']

#: Names the Chromium executable goes by (Debian: chromium).
EXECUTABLES = ('chromium', 'chromium-browser', 'google-chrome',
               'google-chrome-stable')


class BrowserError(RuntimeError):
    r"""The browser did not answer, or answered a command with an error."""


def find_chromium() -> Optional[str]:
    r"""The path of a Chromium executable on :obj:`PATH`, or :obj:`None`."""
    for name in EXECUTABLES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    r"""One headless Chromium with one page.

    Args:
        executable (str, optional): The browser (default: :func:`find_chromium`).
        width (int, optional): Viewport width in pixels. (default: :obj:`1280`)
        height (int, optional): Viewport height. (default: :obj:`900`)
        timeout (float, optional): Seconds to wait for any answer.
            (default: :obj:`60`)
    """
    def __init__(self, executable: Optional[str] = None, width: int = 1280,
                 height: int = 900, timeout: float = 60.0) -> None:
        executable = executable or find_chromium()
        if executable is None:
            raise BrowserError('No Chromium found; install it (Debian: '
                               'apt-get install chromium)')
        self.timeout = timeout
        self.errors: list[str] = []
        self._events: 'queue.Queue[dict]' = queue.Queue()
        self._answers: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix='headless-')
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def connect() -> None:  # In the child: the pipes become fds 3, 4.
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            for fd in (3, 4):
                os.set_inheritable(fd, True)

        self._process = subprocess.Popen(
            [executable, '--headless', '--no-sandbox', '--disable-gpu',
             '--remote-debugging-pipe', '--no-first-run',
             '--no-default-browser-check', '--disable-extensions',
             '--disable-background-networking', '--mute-audio',
             f'--user-data-dir={self._profile}', f'--window-size={width},'
             f'{height}', 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=connect)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        targets = self.send('Target.getTargets')['targetInfos']
        page = next(t for t in targets if t['type'] == 'page')
        self._session = self.send('Target.attachToTarget',
                                  targetId=page['targetId'],
                                  flatten=True)['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.send(f'{domain}.enable', session=True)
        self.send('Emulation.setDeviceMetricsOverride', session=True,
                  width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def _read(self) -> None:
        buffer = b''
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b''
            if not chunk:
                with self._cond:
                    self._answers[-1] = {'closed': True}
                    self._cond.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b'\0')
            for raw in messages:
                message = json.loads(raw)
                if 'id' in message:
                    with self._cond:
                        self._answers[message['id']] = message
                        self._cond.notify_all()
                else:
                    self._note(message)
                    self._events.put(message)

    def _note(self, event: dict) -> None:
        r"""Keeps what a person would see as an error in the console."""
        method, params = event.get('method'), event.get('params', {})
        if method == 'Runtime.exceptionThrown':
            details = params['exceptionDetails']
            self.errors.append(details.get('exception', {}).get(
                'description') or details.get('text', 'exception'))
        elif method == 'Runtime.consoleAPICalled' and \
                params.get('type') in ('error', 'assert'):
            self.errors.append(' '.join(str(a.get('value', a.get(
                'description', ''))) for a in params.get('args', [])))
        elif method == 'Log.entryAdded' and \
                params['entry'].get('level') == 'error':
            self.errors.append(params['entry'].get('text', ''))

    def send(self, method: str, session: bool = False, **params: Any
             ) -> dict:
        r"""Sends one command (to the page with :obj:`session`) and returns
        its result.

        Raises:
            BrowserError: If the browser answers with an error, closes, or
                does not answer within :attr:`timeout`.
        """
        with self._cond:
            self._next_id += 1
            number = self._next_id
        message = {'id': number, 'method': method, 'params': params}
        if session:
            message['sessionId'] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b'\0')
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while number not in self._answers:
                if -1 in self._answers:
                    raise BrowserError(f'The browser closed during {method}')
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f'No answer to {method} in '
                                       f'{self.timeout:.0f} s')
                self._cond.wait(left)
            answer = self._answers.pop(number)
        if 'error' in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message')}")
        return answer.get('result', {})

    def open(self, path: Union[str, Path]) -> float:
        r"""Loads the local file :obj:`path` and waits for its load event;
        returns the seconds from navigation start to the end of the load
        event, as the page's own performance timing measures them."""
        while not self._events.empty():
            self._events.get_nowait()
        self.send('Page.navigate', session=True,
                  url=Path(path).resolve().as_uri())
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                event = self._events.get(
                    timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise BrowserError(f'{path} did not load in '
                                   f'{self.timeout:.0f} s') from None
            if event.get('method') == 'Page.loadEventFired':
                break
        return self.evaluate(
            "(function () { var n = performance.getEntriesByType("
            "'navigation')[0]; return (n.loadEventEnd || "
            "performance.now()) / 1000; })()")

    def evaluate(self, expression: str) -> Any:
        r"""The value of the JavaScript :obj:`expression` in the page
        (JSON-like values; awaited if it is a promise).

        Raises:
            BrowserError: If it throws.
        """
        result = self.send('Runtime.evaluate', session=True,
                           expression=expression, returnByValue=True,
                           awaitPromise=True)
        if 'exceptionDetails' in result:
            raise BrowserError(f"{expression[:60]}...: "
                               f"{result['exceptionDetails'].get('text')}")
        return result['result'].get('value')

    def screenshot(self, path: Union[str, Path], width: int, height: int
                   ) -> None:
        r"""Saves the top :obj:`width` x :obj:`height` pixels of the page
        as PNG (they may reach below the window)."""
        data = self.send('Page.captureScreenshot', session=True,
                         format='png', captureBeyondViewport=True,
                         clip={'x': 0, 'y': 0, 'width': width,
                               'height': height, 'scale': 1})
        Path(path).write_bytes(base64.b64decode(data['data']))

    def close(self) -> None:
        r"""Ends the browser and removes its profile."""
        try:
            self.send('Browser.close')
        except BrowserError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> 'Browser':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
