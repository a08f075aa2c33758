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


# --- what a reader sees: the checks of page_checks.js, on a copy of the site, from file:// -------------

CHECKS_JS = Path(__file__).with_name("page_checks.js")
#: Words that are English and not Portuguese: a page's visible text (outside code and outside
#: elements marked lang="en", the corpus's own text) must not contain them.
ENGLISH_WORDS = (
    "the", "and", "of", "with", "from", "which", "this", "that", "these", "is", "are", "was", "were", "has", "have",
    "been", "not", "for", "only", "when", "because", "could", "couldn't", "cannot", "should", "would", "there",
    "first stage", "after", "reused", "search", "results", "no results", "error", "failed", "reason", "measured",
    "toggle", "copy to clipboard", "copied", "anchor", "back to top", "on this page", "previous", "next",
    "document", "paragraph", "section", "standard", "portuguese", "english", "hybrid", "dense", "true", "false",
    "null", "none", "references", "question", "query", "queries", "chunk", "chunks", "answer", "relevant",
    "built", "seg", "note", "notes", "see", "it", "its", "they", "them", "than", "then", "however", "where",
)


#: The page opened inside an iframe of the exact width: headless Chromium will not make a window
#: narrower than 500 px, but an iframe is a viewport of any width (its media queries included).
FRAME = """<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0;padding:0;background:#fff}iframe{border:0;display:block}</style></head><body>
<script>
const q = new URLSearchParams(location.search);
const f = document.createElement("iframe");
f.width = q.get("w"); f.height = q.get("h"); f.src = q.get("src");
f.style.marginTop = -(parseInt(q.get("top") || "0", 10)) + "px";
window.addEventListener("message", (e) => {
  if (e.data && e.data.gabaritoReport) document.getElementById("gabarito-check-report").textContent = e.data.gabaritoReport;
});
document.body.prepend(f);
</script><pre id="gabarito-check-report"></pre></body></html>
"""


def prepare_copy(site_dir: str | Path, dest: str | Path) -> Path:
    """A copy of the built site whose pages load ``page_checks.js`` first thing in the head (so the
    checks run even on a page whose body was swallowed by stray markup); the site is untouched."""
    site_dir, dest = Path(site_dir), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(site_dir, dest)
    shutil.copyfile(CHECKS_JS, dest / "__page_checks__.js")
    (dest / "__frame__.html").write_text(FRAME, encoding="utf-8")
    (dest / "__check_params__.js").write_text(
        "window.GABARITO_CHECK = JSON.parse(decodeURIComponent("
        "new URLSearchParams(location.search).get('gabarito-check') || '%7B%7D'));\n", encoding="utf-8")
    for page in dest.rglob("*.html"):
        if "site_libs" in page.parts:
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        up = "../" * (len(page.relative_to(dest).parts) - 1)
        tags = f'<script src="{up}__check_params__.js"></script><script src="{up}__page_checks__.js"></script>'
        i = text.lower().find("<head>")
        text = text[:i + 6] + tags + text[i + 6:] if i >= 0 else tags + text
        page.write_text(text, encoding="utf-8")
    return dest


def _chromium(args: list[str], url: str, *, width: int, height: int, budget_ms: int, timeout: float = 180) -> str:
    chromium = find_chromium()
    if not chromium:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
               "--hide-scrollbars", "--allow-file-access-from-files",
               "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--user-data-dir={profile}",
               f"--window-size={width},{height}", f"--virtual-time-budget={budget_ms}", *args, url]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def _frame_url(copy_dir: Path, page: str, width: int, height: int, query: str = "") -> str:
    from urllib.parse import quote

    src = (copy_dir / page).as_uri() + query
    return (copy_dir / "__frame__.html").as_uri() + f"?w={width}&h={height}&src={quote(src, safe='')}"


def check_page(copy_dir: str | Path, page: str, width: int, *, search=None,
               screenshot: Path | None = None, budget_ms: int = 12000) -> dict:
    """Open ``page`` of a :func:`prepare_copy` from ``file://`` in a viewport ``width`` px wide, run
    the checks, and return their report; with ``screenshot``, also write a PNG of the whole page
    (up to 16,000 px tall)."""
    import html as _html
    import re
    from urllib.parse import quote

    copy_dir = Path(copy_dir).resolve()
    params = {"english": [w.replace(" ", r"\s+") for w in ENGLISH_WORDS], "search": search}
    query = "?gabarito-check=" + quote(json.dumps(params))
    dom = _chromium(["--dump-dom"], _frame_url(copy_dir, page, width, 900, query), width=max(width, 500),
                    height=900, budget_ms=budget_ms)
    m = re.search(r'<pre id="gabarito-check-report">(.+?)</pre>', dom, re.S)
    if not m:  # the page never finished loading, or the checks failed: both are failures of the page
        return {"width": width, "no_report": True, "links": []}
    report = json.loads(_html.unescape(m.group(1)))
    if screenshot is not None:
        report["screenshots"] = screenshots(copy_dir, page, width, int(report.get("height") or 900), screenshot,
                                            budget_ms=budget_ms)
    return report


#: The tallest screenshot Chromium takes in one piece; a longer page is shot in parts.
SHOT_MAX = 15000


def screenshots(copy_dir: Path, page: str, width: int, height: int, path: Path, *, budget_ms: int = 12000) -> list[Path]:
    """PNGs of the whole page at ``width``: ``path``, then ``path-2.png``, ... for a page taller
    than :data:`SHOT_MAX`. Under 500 px the picture is 500 px wide, the page in its left ``width`` px."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for i, top in enumerate(range(0, max(height, 900), SHOT_MAX)):
        part = path if i == 0 else path.with_name(f"{path.stem}-{i + 1}{path.suffix}")
        tile = min(SHOT_MAX, max(height, 900) - top)
        url = _frame_url(copy_dir, page, width, height) + f"&top={top}"
        _chromium([f"--screenshot={part}"], url, width=max(width, 500), height=max(tile, 300), budget_ms=budget_ms)
        out.append(part)
    return out
