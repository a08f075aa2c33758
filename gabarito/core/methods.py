"""Methods as values: ``rrf@10`` as an object that knows it is the RRF fusion of the top 10.

A :class:`Method` is a ``str`` (its canonical key, the name results files have always used), so it
is a dict key, a JSON string and a results-file key exactly as before; it also carries what makes
it: ``kind``, its parameters and its inputs. Pages name a method from these fields
(:func:`gabarito.publish.labels.method`) and colour it from them
(:func:`gabarito.publish.palette.method_color`): no key is ever parsed back into its parts. A
method is made by the constructors below (the retrievers, the pipeline, the fusions and the study
scripts call them); a key read back from a results file is a plain ``str``, which names a
:func:`leaf` only -- a compound method's key is found among the :class:`Method` values its study
declares (:func:`among`), never taken apart.

Kinds and their keys:

- ``leaf``: a method known by its name (``bm25``, ``dense_mpnet``, ``rrf_k60``): key = the name;
- ``fused``: reciprocal-rank fusion of its inputs' top ``top``: ``rrf@10``;
- ``reading``: a second reading joined to its first stage at depth ``top`` by ``how`` (``replace``,
  ``rrf``, ``convex``): ``replace@20``;
- ``cross_encoder``: a cross-encoder reader of ``model``: ``cross-encoder <model>``;
- ``first_stage``: a scorer measured on the first stage's own list: ``<scorer> (first stage)``;
- ``reread``: a scorer reading the top ``top`` of a first stage: ``<scorer> (after <first> top N)``;
- ``trained_reading``: the reader trained here (``name``, ``ce``) reading the top ``top`` of a first
  stage, its order replacing the first stage's there: ``<first>+ce@N`` (the classic collections').
"""

from __future__ import annotations

from typing import Iterable, Mapping

from gabarito.errors import GabaritoError

#: How each kind writes its key from its fields.
_KEYS = {
    "leaf": lambda f: f["name"],
    "fused": lambda f: f"rrf@{f['top']}",
    "reading": lambda f: f"{f['how']}@{f['top']}",
    "cross_encoder": lambda f: f"cross-encoder {f['name']}",
    "first_stage": lambda f: f"{f['inputs'][0]} (first stage)",
    "reread": lambda f: f"{f['inputs'][0]} (after {f['inputs'][1]} top {f['top']})",
    "trained_reading": lambda f: f"{f['inputs'][0]}+{f['name']}@{f['top']}",
}
#: How a second reading may be joined to its first stage (gabarito.retrieval.pipeline.fuse_reading).
READING_JOINS = ("replace", "rrf", "convex")


class Method(str):
    """A method: ``str(m)`` is its key; ``m.kind``, ``m.name``, ``m.top``, ``m.how``, ``m.inputs``
    are what makes it. Equal to (and hashed as) its key, so a results dict is read with it as is."""

    kind: str
    name: str
    top: int | None
    how: str | None
    inputs: tuple["Method", ...]

    def __new__(cls, kind: str, *, name: str = "", top: int | None = None, how: str | None = None,
                inputs: Iterable["Method | str"] = ()) -> "Method":
        if kind not in _KEYS:
            raise GabaritoError(f"unknown method kind {kind!r} (expected one of {', '.join(_KEYS)})")
        fields = {"kind": kind, "name": name, "top": top, "how": how,
                  "inputs": tuple(i if isinstance(i, Method) else leaf(i) for i in inputs)}
        key = _KEYS[kind](fields)
        self = str.__new__(cls, key)
        self.__dict__.update(fields)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("a Method is a value: make another one")

    def __reduce__(self):
        return (_rebuild, (self.to_dict(),))

    def __repr__(self) -> str:
        return f"Method({str.__repr__(self)})"

    def to_dict(self) -> dict:
        """The fields, as JSON (only those set), inputs nested."""
        out = {"kind": self.kind}
        out.update({k: getattr(self, k) for k in ("name", "top", "how") if getattr(self, k) not in ("", None)})
        if self.inputs:
            out["inputs"] = [i.to_dict() for i in self.inputs]
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> "Method":
        return cls(d["kind"], name=d.get("name", ""), top=d.get("top"), how=d.get("how"),
                   inputs=[cls.from_dict(i) for i in d.get("inputs", ())])


def _rebuild(d: Mapping) -> Method:
    return Method.from_dict(d)


def leaf(name: str) -> Method:
    """A method known by its name: ``leaf("bm25")``."""
    if not isinstance(name, str) or not name:
        raise GabaritoError(f"a method's name must be a non-empty string, not {name!r}")
    return name if isinstance(name, Method) else Method("leaf", name=name)


def fused(top: int, inputs: Iterable[Method | str] = ()) -> Method:
    """Reciprocal-rank fusion of ``inputs`` cut at ``top``: key ``rrf@<top>``."""
    return Method("fused", top=_positive(top, "fusion depth"), inputs=inputs)


def reading(how: str, top: int) -> Method:
    """A second reading of the first ``top`` candidates joined to its first stage by ``how``."""
    if how not in READING_JOINS:
        raise GabaritoError(f"unknown way to join a reading {how!r} (expected one of {', '.join(READING_JOINS)})")
    return Method("reading", how=how, top=_positive(top, "reading depth"))


def cross_encoder(model: str) -> Method:
    """A cross-encoder reader of ``model`` (a model id or a cached folder's portable name)."""
    return Method("cross_encoder", name=model)


def first_stage(scorer: Method | str) -> Method:
    """``scorer`` measured on its own first-stage list."""
    return Method("first_stage", inputs=[scorer])


def reread(scorer: Method | str, first: Method | str, top: int) -> Method:
    """``scorer`` reading the top ``top`` of ``first``."""
    return Method("reread", top=_positive(top, "reading depth"), inputs=[scorer, first])


def trained_reading(first: Method | str, top: int, reader: str = "ce") -> Method:
    """The reader trained here (``reader``) reading the top ``top`` of ``first``: ``bm25+ce@20``."""
    return Method("trained_reading", name=reader, top=_positive(top, "reading depth"), inputs=[first])


def _positive(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GabaritoError(f"{what} must be a positive whole number, not {value!r}")
    return value


def declare(methods: Iterable[Method]) -> dict[str, Method]:
    """The methods a study declares, by key (what :func:`among` looks a key up in, built once);
    one key declared twice as two different methods is an error naming it."""
    out: dict[str, Method] = {}
    for m in methods:
        m = m if isinstance(m, Method) else leaf(m)
        if m in out and out[m].to_dict() != m.to_dict():
            raise GabaritoError(f"method {str(m)!r} is declared twice as two different methods")
        out[str(m)] = m
    return out


def among(key: str, declared: Mapping[str, Method] | Iterable[Method]) -> Method:
    """The method whose key is ``key`` among those a study ``declared`` (their index from
    :func:`declare`, or the methods themselves); a key none of them has is an error naming it
    (never a guess from the key's spelling)."""
    if isinstance(key, Method):
        return key
    index = declared if isinstance(declared, Mapping) else declare(declared)
    try:
        return index[key]
    except KeyError:
        raise GabaritoError(f"method {key!r} is not one of the methods declared here") from None
