"""Fast tests of the reranking study's token arithmetic (case-studies/reranking/rerank_tokens.py):
no model, no network."""

import os
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError

from studies.reranking.rerank_tokens import (count_tokens, describe_counts, listwise_prompt, load_tiktoken,
                                             permutation_answer)


def test_describe_counts():
    d = describe_counts([1, 2, 3, 10])
    assert (d["n"], d["mean"], d["median"], d["min"], d["max"], d["sum"]) == (4, 4.0, 2.5, 1.0, 10.0, 16.0)
    assert d["p95"] == pytest.approx(3 + 0.85 * 7)
    with pytest.raises(GabaritoError):
        describe_counts([])


def test_count_tokens_passes_the_pair_and_the_special_tokens_flag():
    calls = []

    def tokenizer(text, pair, *, add_special_tokens, truncation):
        calls.append((text, pair, add_special_tokens, truncation))
        words = text.split() + (pair.split() if pair else [])
        return {"input_ids": words + (["[CLS]", "[SEP]"] if add_special_tokens else [])}

    assert count_tokens(tokenizer, "a b c") == 5
    assert count_tokens(tokenizer, "a b", "c d e", special=False) == 5
    assert calls[-1] == ("a b", "c d e", False, False)


def test_listwise_prompt_and_answer():
    prompt = listwise_prompt("onde está meu pedido?", ["primeiro  texto\ncom quebra", "segundo"])
    assert "2 numbered passages" in prompt
    assert "[1] primeiro texto com quebra\n\n[2] segundo" in prompt
    assert prompt.count("Query: onde está meu pedido?") == 2 and prompt.endswith("Ranking:")
    assert permutation_answer(3) == "[1] > [2] > [3]"
    assert permutation_answer(0) == ""
    with pytest.raises(GabaritoError):
        permutation_answer(-1)


def test_load_tiktoken_reports_every_failed_source(monkeypatch):
    pytest.importorskip("tiktoken")
    import tiktoken

    def offline(name):
        raise ConnectionError("no network here")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    enc, report = load_tiktoken("o200k_base", sources=[("no-such-distribution-xyz", "x/{name}", False)])
    assert enc is None
    assert report["attempts"][0]["error"] == "ConnectionError: no network here"
    assert report["attempts"][1]["source"] == "pypi:no-such-distribution-xyz"


def test_load_tiktoken_from_a_package_checks_the_pinned_hash(monkeypatch, tmp_path):
    pytest.importorskip("tiktoken")
    from importlib import metadata

    import tiktoken
    import tiktoken.load

    real = tiktoken.get_encoding
    calls = []

    def first_offline(name):
        calls.append(name)
        if len(calls) == 1:
            raise ConnectionError("no network here")
        return real(name)

    class FakeDist:
        version = "0"

        def locate_file(self, member):
            return tmp_path / member

    def no_download(blobpath):
        raise ConnectionError(f"no network for {blobpath}")

    (tmp_path / "o200k_base.tiktoken").write_bytes(b"not a real BPE file\n")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    monkeypatch.setattr(tiktoken, "get_encoding", first_offline)
    monkeypatch.setattr(metadata, "distribution", lambda name: FakeDist())
    enc, report = load_tiktoken("o200k_base", sources=[("fake", "{name}.tiktoken", False)])
    assert enc is None  # tiktoken refused the file: its sha256 is not the pinned one
    assert report["attempts"][-1]["source"] == "pypi:fake"
    assert len(calls) == 2 and "TIKTOKEN_CACHE_DIR" not in os.environ
