"""A generated dbt docs site in a real browser: `target/` served over HTTP on 127.0.0.1,
a page rendered by headless Chromium (its DOM after dbt docs' scripts ran, and a
screenshot), and what a person reads on a node's page (the Details figures, the
Description).

Chromium comes from `scripts/install-system-deps --browser` (Debian's `chromium` package)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# Without the background-networking switches Chromium keeps reaching for Google's
# services, which a closed network makes it wait on.
CHROMIUM_SWITCHES = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # dbt docs loads manifest.json and catalog.json after the page: wait for them.
    "--virtual-time-budget=10000",
)
# Wide enough for a table's Details row: narrower (1400 pixels), dbt docs scrolls it
# sideways and the last figures (Rows, Size, Snapshots) start out of view.
WINDOW_SIZE = "1920,1200"


def chromium() -> str:
    """The Chromium on PATH; the test fails (it is not skipped) without one, as
    `make test` installs it (`make emulators`)."""
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(
            "No `chromium` on PATH: `make emulators` (`scripts/install-system-deps --browser`, "
            "part of `make test`) installs it"
        )
    return found


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request on the test's output."""


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """`folder` served over HTTP on 127.0.0.1 while the block runs: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Chromium with the switches above and `args`, in a new empty profile folder."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [chromium(), *CHROMIUM_SWITCHES, f"--user-data-dir={profile}", *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def rendered_dom(url: str) -> str:
    """The page's DOM once its scripts ran."""
    return run_chromium("--dump-dom", url).stdout


def screenshot(url: str, path: Path) -> None:
    """A PNG of the page's first WINDOW_SIZE pixels, at `path`."""
    run_chromium(f"--window-size={WINDOW_SIZE}", f"--screenshot={path}", url)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"no screenshot at {path}"


class NodePage(HTMLParser):
    """What a dbt docs node page shows: each Details item (`<dt class="detail-label">`,
    then its `<dd class="detail-value">`) as (label, value), its hover text (`title`) by
    label, and the Description's text (the page's first markdown block)."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.details: list[tuple[str, str]] = []
        self.hover: dict[str, str] = {}
        self.description = ""
        self._label: str | None = None
        self._title: str | None = None
        self._reading: str | None = None  # "label", "value" or "description"
        self._depth = 0  # `div`s open inside the description
        self._text: list[str] = []
        self.feed(dom)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._reading == "description":
            if tag == "div":
                self._depth += 1
            return
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "dt" and "detail-label" in classes:
            self._reading, self._title, self._text = "label", attributes.get("title"), []
        elif tag == "dd" and "detail-value" in classes and self._label is not None:
            self._reading, self._text = "value", []
        elif tag == "div" and "model-markdown" in classes and not self.description:
            self._reading, self._depth, self._text = "description", 0, []

    def handle_endtag(self, tag: str) -> None:
        text = " ".join("".join(self._text).split())
        if self._reading == "label" and tag == "dt":
            self._label, self._reading = text, None
            if self._title:
                self.hover[text] = self._title
        elif self._reading == "value" and tag == "dd":
            assert self._label is not None
            self.details.append((self._label, text))
            self._label = self._reading = None
        elif self._reading == "description" and tag == "div":
            if self._depth:
                self._depth -= 1
            else:
                self.description, self._reading = text, None

    def handle_data(self, data: str) -> None:
        if self._reading is not None:
            self._text.append(data)
