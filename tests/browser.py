"""A real headless browser for tests: Chromium driven through chromedriver.

Self-contained (standard library only): it speaks the W3C WebDriver
protocol over HTTP to a ``chromedriver`` started on a free local port, so no
selenium is needed.  Tests open a page, wait for a condition evaluated in
the page, read the browser's console log and take screenshots.

Chromium is started with a fresh profile and without the background
network traffic a browser makes by itself (updates, sync, QUIC probing), so
a page that works here works offline.

>>> from browser import Browser, browser_available
>>> if browser_available():                       # doctest: +SKIP
...     with Browser() as b:
...         b.get("file:///tmp/page.html")
...         b.wait_for("return document.readyState === 'complete'")
...         errors = b.console_errors()
"""
from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["Browser", "BrowserError", "browser_available", "find_browser",
           "CHROMIUM_FLAGS", "INSTALL_HINT"]

#: Command-line flags of the headless Chromium (a fresh ``--user-data-dir``
#: is added per browser).
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--window-size=1280,1024",
)
#: What to install where the browser is missing (Debian).
INSTALL_HINT = "apt-get install -y chromium chromium-driver"

_BROWSERS = ("chromium", "chromium-browser", "google-chrome")
_DRIVERS = ("chromedriver",)


class BrowserError(RuntimeError):
    """The browser or its driver failed; the message says how."""


def find_browser() -> tuple[str, str] | None:
    """Paths of (Chromium, chromedriver), or None when either is missing."""
    browser = next((p for p in map(shutil.which, _BROWSERS) if p), None)
    driver = next((p for p in map(shutil.which, _DRIVERS) if p), None)
    return (browser, driver) if browser and driver else None


def browser_available() -> bool:
    """True when Chromium and chromedriver are both installed."""
    return find_browser() is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """A headless Chromium session; use as a context manager.

    Parameters
    ----------
    width, height : int
        Window size in CSS pixels.
    timeout : float
        Seconds to wait for the driver to start and for each command.
    """

    def __init__(self, *, width: int = 1280, height: int = 1024,
                 timeout: float = 60.0):
        found = find_browser()
        if found is None:
            raise BrowserError(
                f"Chromium and chromedriver are needed: {INSTALL_HINT}")
        self.binary, self.driver_path = found
        self.width, self.height = width, height
        self.timeout = float(timeout)
        self._profile = None
        self._driver = None
        self._session = None
        self._base = None

    # ------------------------------------------------------------------
    def __enter__(self) -> "Browser":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start chromedriver and open a browser session."""
        self._profile = tempfile.mkdtemp(prefix="browser-profile-")
        port = _free_port()
        self._base = f"http://127.0.0.1:{port}"
        self._driver = subprocess.Popen(
            [self.driver_path, f"--port={port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                if self._request("GET", "/status").get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self._driver.poll() is not None:
                raise BrowserError("chromedriver exited at start "
                                   f"(status {self._driver.returncode})")
            if time.monotonic() > deadline:
                self.close()
                raise BrowserError("chromedriver did not start in "
                                   f"{self.timeout:g} s")
            time.sleep(0.1)
        args = list(CHROMIUM_FLAGS) + [
            f"--user-data-dir={self._profile}",
            f"--window-size={self.width},{self.height}"]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": self.binary, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}}
        value = self._request("POST", "/session", caps)
        self._session = value["sessionId"]

    def close(self) -> None:
        """End the session, stop the driver, remove the profile."""
        if self._session is not None:
            try:
                self._request("DELETE", f"/session/{self._session}")
            except (urllib.error.URLError, BrowserError, OSError):
                pass
            self._session = None
        if self._driver is not None:
            self._driver.terminate()
            try:
                self._driver.wait(10)
            except subprocess.TimeoutExpired:
                self._driver.kill()
                self._driver.wait()
            self._driver = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    # ------------------------------------------------------------------
    def _request(self, method: str, path: str, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(
            self._base + path, data=data, method=method,
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("value", {})
            except (ValueError, AttributeError):
                detail = {}
            raise BrowserError(
                f"{method} {path}: {detail.get('error', exc.code)}: "
                f"{detail.get('message', '')}".strip()) from None
        return body.get("value", body)

    def _command(self, method: str, path: str, payload=None):
        if self._session is None:
            raise BrowserError("the browser is not started")
        return self._request(method, f"/session/{self._session}{path}",
                             payload)

    # ------------------------------------------------------------------
    def get(self, url: str) -> None:
        """Open ``url`` (a ``Path`` opens the file) and wait for the load."""
        if isinstance(url, Path):
            url = url.resolve().as_uri()
        self._command("POST", "/url", {"url": url})

    def execute(self, script: str, *args):
        """Run ``script`` (a function body: ``return ...``) in the page."""
        return self._command("POST", "/execute/sync",
                             {"script": script, "args": list(args)})

    def wait_for(self, script: str, timeout: float = 30.0, interval=0.2):
        """Poll ``script`` until it returns a truthy value; return it.

        Raises
        ------
        BrowserError
            When it is still falsy after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            value = self.execute(script)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(
                    f"condition not met after {timeout:g} s: {script}")
            time.sleep(interval)

    def console(self) -> list[dict]:
        """Console messages since the last call: dicts with ``level``
        (``"SEVERE"``, ``"WARNING"``, ``"INFO"``, ...) and ``message``."""
        return self._command("POST", "/se/log", {"type": "browser"})

    def console_errors(self) -> list[str]:
        """Messages of level SEVERE since the last read: uncaught script
        errors, failed resource loads, ``console.error``."""
        return [e["message"] for e in self.console()
                if e.get("level") == "SEVERE"]

    def screenshot(self, path) -> Path:
        """Save a PNG of the viewport to ``path``."""
        png = base64.b64decode(self._command("GET", "/screenshot"))
        path = Path(path)
        path.write_bytes(png)
        return path
