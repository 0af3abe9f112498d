"""A real headless browser for tests: Debian's Chromium driven by selenium.

Both browser tests (the HTML report, the documentation site) open pages
through :class:`Browser`: open a page, wait for a condition evaluated in
it, read its console log, take a screenshot.  Chromium is started with a
fresh profile and without the traffic a browser makes by itself (updates,
sync, QUIC probing), so a page that works here works offline.

Where Chromium or chromedriver is missing a test is skipped locally, but
fails under CI (``$CI`` set), which installs both: the check cannot
silently vanish there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

__all__ = [
    "Browser",
    "BrowserError",
    "find_browser",
    "need_browser",
    "CHROMIUM_FLAGS",
    "INSTALL_HINT",
]

#: Command-line flags of the headless Chromium (a fresh ``--user-data-dir``
#: is added per browser).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: What to install where the browser is missing (Debian).
INSTALL_HINT = "apt-get install -y chromium chromium-driver"


class BrowserError(RuntimeError):
    """The browser did not do what was asked in time; the message says what."""


def find_browser() -> tuple[str, str] | None:
    """Paths of (Chromium, chromedriver), or None when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def need_browser() -> None:
    """Skip the calling test where no browser is installed; under CI, fail."""
    if find_browser() is not None:
        return
    message = f"Chromium and chromedriver are needed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message + " (.ci/run installs them)")
    pytest.skip(message)


class Browser:
    """A headless Chromium session; use as a context manager.

    Parameters
    ----------
    width, height : int
        Window size in CSS pixels.
    """

    def __init__(self, *, width: int = 1280, height: int = 1024):
        found = find_browser()
        if found is None:
            raise BrowserError(f"Chromium and chromedriver are needed: {INSTALL_HINT}")
        self.binary, self.driver_path = found
        self.width, self.height = width, height
        self._driver = None
        self._profile = None

    def __enter__(self) -> Browser:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="browser-profile-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = self.binary
        for flag in (
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={self.width},{self.height}",
        ):
            opts.add_argument(flag)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self._driver = webdriver.Chrome(service=Service(self.driver_path), options=opts)
        return self

    def __exit__(self, *exc) -> None:
        if self._driver is not None:
            self._driver.quit()
            self._driver = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def get(self, url) -> None:
        """Open ``url`` (a ``Path`` opens the file) and wait for the load."""
        if isinstance(url, Path):
            url = url.resolve().as_uri()
        self._driver.get(url)

    def execute(self, script: str, *args):
        """Run ``script`` (a function body: ``return ...``) in the page."""
        return self._driver.execute_script(script, *args)

    def wait_for(self, script: str, timeout: float = 30.0, interval: float = 0.2):
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
                raise BrowserError(f"condition not met after {timeout:g} s: {script}")
            time.sleep(interval)

    def console(self) -> list[dict]:
        """Console messages since the last call: dicts with ``level``
        (``"SEVERE"``, ``"WARNING"``, ``"INFO"``, ...) and ``message``."""
        return self._driver.get_log("browser")

    def console_errors(self) -> list[str]:
        """Messages of level SEVERE since the last read: uncaught script
        errors, failed resource loads, ``console.error``."""
        return [e["message"] for e in self.console() if e.get("level") == "SEVERE"]

    def screenshot(self, path) -> Path:
        """Save a PNG of the viewport to ``path``."""
        path = Path(path)
        if not self._driver.save_screenshot(str(path)):
            raise BrowserError(f"no screenshot written to {path}")
        return path
