"""Y40-dup-config: ``CurveConfig`` and ``TrainingConfig`` share their fields through
``ReaderRecipe``, and a cached reader's folder keeps its name.

A trained reader is cached under a folder named by a hash of ``config.__dict__`` (``study/readers``
for ``TrainingConfig``, ``train_reader_curve._folder`` for ``CurveConfig``); the keys below were
computed before the two configs were derived from one recipe.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from gabarito.hashing import sha256_text
from gabarito.retrieval.rerank.resumable import CurveConfig
from gabarito.retrieval.rerank.training import Pair, ReaderRecipe, TrainingConfig

KEYS_BEFORE = {  # computed on the configs as they were before ReaderRecipe (commit e98b29c)
    "train_default": "3c76543abbdcdaaa",
    "train_custom": "c4686dac679a7fbc",
    "curve_default": "24122f18e1334882",
    "curve_custom": "3a1225432cfd5c70",
}
CONFIGS = {
    "train_default": lambda: TrainingConfig(),
    "train_custom": lambda: TrainingConfig(max_steps=250, seed=20260817, max_length=128, learning_rate=5e-5,
                                           head_learning_rate=1e-3, time_limit_s=1500.0, loss="grouped"),
    "curve_default": lambda: CurveConfig(),
    "curve_custom": lambda: CurveConfig(loss="grouped", budget_pairs=60000, checkpoint_pairs=4000, batch_size=16,
                                        max_length=128, seed=20260817, torch_threads=2),
}


def key(config) -> str:
    """The hash every reader cache names its folder by (the config's fields and values)."""
    return sha256_text(json.dumps({"config": config.__dict__, "pairs": [["q1", "d1", 1.0]]},
                                  sort_keys=True, default=str))[:16]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_cached_reader_keeps_its_key(name):
    assert key(CONFIGS[name]()) == KEYS_BEFORE[name]


def test_both_configs_are_one_recipe_and_their_own_fields():
    shared = {f.name for f in dataclasses.fields(ReaderRecipe)}
    assert issubclass(TrainingConfig, ReaderRecipe) and issubclass(CurveConfig, ReaderRecipe)
    assert {f.name for f in dataclasses.fields(TrainingConfig)} - shared == {
        "max_steps", "logging_steps", "time_limit_s", "grouped_negatives"}
    assert {f.name for f in dataclasses.fields(CurveConfig)} - shared == {
        "budget_pairs", "checkpoint_pairs", "max_grad_norm"}
    # each keeps its own defaults where they differ
    assert (TrainingConfig().learning_rate, TrainingConfig().max_length) == (3e-5, 256)
    assert (CurveConfig().learning_rate, CurveConfig().max_length) == (5e-5, 128)
    assert CurveConfig(budget_pairs=33, batch_size=16).max_steps == 3


def test_the_curve_folder_is_named_as_before(tmp_path, monkeypatch):
    from studies.standard_collections import train_reader_curve

    monkeypatch.setattr(train_reader_curve, "cache_dir", lambda: tmp_path)
    groups = lambda epoch: [[Pair("q1", "d1", "q", "t", 1.0, "positive")]]  # noqa: E731
    folder = train_reader_curve._folder("adi", CONFIGS["curve_custom"](), groups)
    # the name computed from the config as it was before ReaderRecipe (its fields, as recorded then)
    assert folder == tmp_path / "cross-encoders" / "curve-adi-grouped-be58ad6b5c04177c"
