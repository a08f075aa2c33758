"""A thin JSON-over-HTTP client for one ArcadeDB database: one keep-alive session, basic auth,
SQL with bound parameters only; failures are one line naming the server URL."""

from __future__ import annotations

import math
import re
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from gabarito.errors import GabaritoError

_DB_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")
#: The longest a request may be given (seconds): a day. Longer ones overflow the socket's clock.
MAX_TIMEOUT = 86400.0


def check_url(url: str) -> str:
    """``url`` when it is an ``http(s)://host[:port]`` address without credentials; a user name or
    password inside it would be recorded with the run, so it is refused in one line that does
    not repeat it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        parts = None
    if parts is not None and "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        raise GabaritoError(f"the ArcadeDB URL {parts.scheme}://***@{host} holds a user name or password, which "
                            f"would be recorded with the run; give the URL without them and set "
                            f"GABARITO_ARCADEDB_USER and GABARITO_ARCADEDB_PASSWORD")
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise GabaritoError(f"the ArcadeDB URL {url!r} is not an http:// or https:// address with a host")
    return url


def check_timeout(value: object, what: str) -> float:
    """``value`` as seconds: a finite number above 0 and at most :data:`MAX_TIMEOUT`; else one
    line naming ``what`` (e.g. the environment variable it came from)."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 < seconds <= MAX_TIMEOUT:
        raise GabaritoError(f"{what} must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} (a day), "
                            f"not {value!r}")
    return seconds


class ServerError(GabaritoError):
    """The server answered, refusing the request (HTTP 4xx/5xx): not a lost connection."""


def _short(sql: str, n: int = 80) -> str:
    sql = " ".join(sql.split())
    return sql if len(sql) <= n else sql[: n - 3] + "..."


def _reason(exc: Exception) -> str:
    """The useful part of a requests exception (its repr nests several layers)."""
    text = str(exc)
    m = re.search(r"\[Errno -?\d+\][^'\")\]]*", text)
    if m:
        return m.group(0).strip()
    for name in ("RemoteDisconnected", "ConnectionResetError", "BrokenPipeError", "IncompleteRead"):
        if name in text:
            return f"connection lost ({name})"
    return f"{type(exc).__name__}: {_short(text, 200)}"


def _server_error(resp: requests.Response) -> str:
    try:
        body = resp.json()
        parts = [str(body.get(key) or "").strip() for key in ("error", "detail")]
        text = ": ".join(dict.fromkeys(p for p in parts if p)) or resp.reason
    except ValueError:
        text = resp.text.strip() or resp.reason
    return _short(text, 400)


class ArcadeClient:
    """JSON-over-HTTP client for one database. SQL text is fixed; user values go in ``params``."""

    def __init__(self, url: str, user: str, password: str, database: str, timeout: float = 120.0):
        check_url(url)
        if not _DB_NAME.match(database or ""):
            raise GabaritoError(f"ArcadeDB at {url}: database name {database!r} is not letters, digits, _ or -")
        self.url = url.rstrip("/")
        self.database = database
        self.timeout = check_timeout(timeout, "the ArcadeDB client's timeout")
        self.session = requests.Session()
        self.session.auth = (user, password)

    def _request(self, method: str, path: str, what: str, *, timeout: float | None = None,
                 **kwargs: Any) -> requests.Response:
        """One request, answered in full within ``timeout`` seconds (the client's by default):
        requests' own timeout bounds each read of the socket, so the body is read here against
        a deadline for the whole answer."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            resp = self.session.request(method, self.url + path, timeout=limit, stream=True, **kwargs)
            try:
                body = bytearray()
                for part in resp.iter_content(1 << 16):
                    body += part
                    if time.monotonic() > deadline:
                        raise requests.Timeout("deadline")
                resp._content = bytes(body)  # what resp.json() and resp.text read
            finally:
                resp.close()
        except requests.Timeout as exc:
            raise GabaritoError(f"ArcadeDB at {self.url} did not answer {what} within {limit:g}s") from exc
        except requests.RequestException as exc:
            raise GabaritoError(f"ArcadeDB at {self.url} not reachable: {_reason(exc)}") from exc
        if resp.status_code >= 400:
            raise ServerError(f"ArcadeDB at {self.url} failed {what}: "
                                f"HTTP {resp.status_code} {_server_error(resp)}")
        return resp

    def _sql(self, endpoint: str, sql: str, params: dict[str, Any] | None,
             timeout: float | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"language": "sql", "command": sql}
        if params:
            body["params"] = params
        what = f"{endpoint} '{_short(sql)}' on database '{self.database}'"
        resp = self._request("POST", f"/api/v1/{endpoint}/{self.database}", what, timeout=timeout, json=body)
        return resp.json()["result"]

    def command(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a (possibly writing) SQL statement in its own transaction."""
        return self._sql("command", sql, params)

    def query(self, sql: str, params: dict[str, Any] | None = None, *,
              timeout: float | None = None) -> list[dict[str, Any]]:
        """Run a read-only SQL query, answered within ``timeout`` seconds (the client's by default)."""
        return self._sql("query", sql, params, timeout)

    def _server_command(self, command: str) -> None:
        self._request("POST", "/api/v1/server", f"'{command}'", json={"command": command})

    def create_database(self) -> None:
        self._server_command(f"create database {self.database}")

    def drop_database(self) -> None:
        self._server_command(f"drop database {self.database}")

    def database_exists(self) -> bool:
        resp = self._request("GET", f"/api/v1/exists/{self.database}", "the database check")
        return bool(resp.json().get("result"))

    def ping(self) -> bool:
        """True when the server answers ``/api/v1/ready``; GabaritoError when it cannot be reached."""
        return self._request("GET", "/api/v1/ready", "the ready check").status_code == 204

    def server_version(self) -> str:
        resp = self._request("GET", "/api/v1/server", "the version request", params={"mode": "basic"})
        return str(resp.json().get("version", "unknown"))

    def close(self) -> None:
        self.session.close()
