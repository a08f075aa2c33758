"""Drive the system's headless Chromium through the DevTools protocol over a pipe.

``--remote-debugging-pipe`` makes Chromium read protocol commands from its file descriptor 3 and
write answers and events to 4, each message a JSON text ended by a NUL byte: no websocket, no
port, no package beyond the standard library. :class:`Browser` opens one page, attaches to it
(flat sessions), and offers what the judging test needs: navigate, evaluate, press a key, reload,
set the viewport, allow downloads into a folder, and the URLs of every request the page made.
The flags are those of ``tests/publish/browser.py`` (every host name but 127.0.0.1 unresolvable).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]

#: what a key press needs: DOM key -> (code, virtual key code)
KEYS = {"0": ("Digit0", 48), "1": ("Digit1", 49), "2": ("Digit2", 50), "u": ("KeyU", 85),
        "Backspace": ("Backspace", 8)}


class Browser:
    def __init__(self, chromium: str, *, width: int = 1280, height: int = 900, timeout: float = 30):
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-cdp-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child: its fd 3 reads our commands, its fd 4 writes its answers
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=wire, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._answers: dict[int, dict] = {}
        self.events: list[dict] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        targets = self.send("Target.getTargets")["targetInfos"]
        self._attach(next(t for t in targets if t["type"] == "page")["targetId"])

    def _attach(self, target_id: str) -> None:
        """Talk to this tab from now on, its page, script and network events on."""
        self.session = self.send("Target.attachToTarget", targetId=target_id, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=True)

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._answers[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def send(self, method: str, *, session: bool = False, **params) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while self._next_id not in self._answers:
                if not self._cond.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no answer to {method}")
        answer = self._answers.pop(self._next_id)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"never true: {expression}")

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)

    def open_tab(self, url: str) -> None:
        """Close the current tab, open ``url`` in a new one and talk to it from now on (as a user
        who closes the page and opens it again)."""
        current = self.send("Target.getTargetInfo", session=True)["targetInfo"]["targetId"]
        self.send("Target.closeTarget", targetId=current)
        self._attach(self.send("Target.createTarget", url="about:blank")["targetId"])
        self.navigate(url)

    def press(self, key: str) -> None:
        code, vk = KEYS[key]
        text = key if len(key) == 1 else ""
        self.send("Input.dispatchKeyEvent", session=True, type="keyDown", key=key, code=code, text=text,
                  windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
        self.send("Input.dispatchKeyEvent", session=True, type="keyUp", key=key, code=code,
                  windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)

    def allow_downloads(self, folder: Path) -> None:
        self.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(folder), eventsEnabled=True)

    def screenshot(self, path: Path) -> Path:
        import base64

        data = self.send("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def requested_urls(self) -> list[str]:
        with self._cond:
            return [e["params"]["request"]["url"] for e in self.events
                    if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # already gone
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        self._profile.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
