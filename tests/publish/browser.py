"""Open a built site in headless Chromium, served from 127.0.0.1, and record what was fetched.

``open_page(site_dir, "notebooks/x.html")`` serves ``site_dir`` with ``http.server`` in a
thread (every requested path is logged), runs Chromium with every host name except 127.0.0.1
unresolvable, and returns a :class:`PageVisit`: the DOM after scripts ran, the paths the server
saw, and every request the page made (from Chromium's net log), so a test can assert that no
request left 127.0.0.1.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "chromium", "chromium-browser")


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name) or (name if Path(name).is_file() else None)
        if path:
            return path
    return None


@dataclass
class PageVisit:
    url: str
    dom: str
    served: list[tuple[str, int]] = field(default_factory=list)  # (path, status) as the server saw them
    page_requests: list[str] = field(default_factory=list)  # every URL the page asked for (net log)
    stderr: str = ""

    @property
    def external_requests(self) -> list[str]:
        """The page's requests to any host other than 127.0.0.1 / localhost."""
        out = []
        for url in self.page_requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about", "chrome", "chrome-extension"):
                continue
            if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
                out.append(url)
        return out

    @property
    def missing(self) -> list[str]:
        """Paths the server answered with 404 (favicon.ico aside)."""
        return [p for p, status in self.served if status == 404 and not p.endswith("favicon.ico")]


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, log: list, **kwargs):
        self._log = log
        super().__init__(*args, **kwargs)

    def log_request(self, code="-", size="-"):
        try:
            status = int(getattr(code, "value", code))
        except (TypeError, ValueError):
            status = 0
        self._log.append((self.path, status))

    def log_message(self, format, *args):  # keep test output quiet
        pass


class SiteServer:
    """``http.server`` on 127.0.0.1 (a free port) serving one folder, in a daemon thread."""

    def __init__(self, directory: Path):
        self.log: list[tuple[str, int]] = []
        handler = functools.partial(_LoggingHandler, directory=str(directory), log=self.log)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"


def _read_net_log(path: Path) -> list[str]:
    """URLs of the requests made on behalf of a 127.0.0.1 page (Chromium's own traffic left out)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return []
    try:
        data = json.loads(text)
    except ValueError:  # a log cut short: close its event list
        data = json.loads(text.rstrip(",") + "]}")
    names = {v: k for k, v in data.get("constants", {}).get("logEventTypes", {}).items()}
    urls = []
    for event in data.get("events", []):
        if names.get(event.get("type")) != "URL_REQUEST_START_JOB":
            continue
        p = event.get("params") or {}
        initiator = str(p.get("initiator", ""))
        # the page's own loads name it as initiator; Chromium's own traffic says "not an origin"
        if "127.0.0.1" in initiator or p.get("request_type") == "main frame":
            urls.append(p.get("url", ""))
    return urls


def chromium_dump_dom(url: str, *, budget_ms: int = 10000, timeout: float = 120,
                      chromium: str | None = None, net_log: Path | None = None,
                      screenshot: Path | None = None) -> tuple[str, str]:
    """Run headless Chromium on ``url``; return (DOM after scripts, stderr)."""
    chromium = chromium or find_chromium()
    if not chromium:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        cmd = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
            "--disable-features=AutofillServerCommunication,OptimizationHints,Translate,MediaRouter",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
        ]
        if net_log is not None:
            cmd.append(f"--log-net-log={net_log}")
        if screenshot is not None:
            cmd += [f"--screenshot={screenshot}", "--window-size=1280,2400"]
        else:
            cmd.append("--dump-dom")
        cmd.append(url)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout, proc.stderr


def open_page(site_dir: str | Path, page: str, *, budget_ms: int = 10000, screenshot: Path | None = None) -> PageVisit:
    """Serve ``site_dir`` on 127.0.0.1, open ``page`` in headless Chromium, and report what happened."""
    site_dir = Path(site_dir)
    with tempfile.TemporaryDirectory(prefix="netlog-") as tmp, SiteServer(site_dir) as server:
        net_log = Path(tmp) / "net.json"
        url = server.url(page)
        dom, err = chromium_dump_dom(url, budget_ms=budget_ms, net_log=net_log)
        if screenshot is not None:
            chromium_dump_dom(url, budget_ms=budget_ms, screenshot=screenshot)
        requests = _read_net_log(net_log)
        served = list(server.log)
    return PageVisit(url=url, dom=dom, served=served, page_requests=requests, stderr=err)
