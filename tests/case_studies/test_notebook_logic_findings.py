"""Y40-notebook-logic: what moved out of the notebooks' code into findings, on small fixtures (the
verdicts and numbers each cell computed inline before)."""

from __future__ import annotations

import pytest

from gabarito.publish.verdicts import share
from studies.helpcenter import findings as helpcenter
from studies.peers import cold_report
from studies.peers import findings as peers


@pytest.mark.parametrize("part, whole, large, minority", [
    (3, 5, True, False), (2, 4, False, False), (1, 4, False, True), (0, 4, False, True), (0, 0, False, False)])
def test_share_says_most_and_few_as_the_cells_did(part, whole, large, minority):
    # colecoes_classicas: len(better) * 2 > n; reranking: len(separam) * 2 < len(linhas)
    assert share(part, whole).large is large and large == (part * 2 > whole)
    assert share(part, whole).minority is minority and minority == (part * 2 < whole)


def test_peers_example_and_backend():
    row = {"s_per": 1.234, "setting": "onnx_o2"}
    assert peers.example_ms(row) == 1.234 * 100_000 / 1000 * 1000  # the notebook's own expression, to the bit
    assert peers.backend_name(row) == "ONNX Runtime" and peers.backend_name({"setting": "torch"}) == "torch"


def test_the_longest_studies_of_the_whole_report():
    cold = {"studies": {"a": {"process_wall_s": 10.0}, "b": {"process_wall_s": None}, "c": {"process_wall_s": 30.0}},
            "not_run": {"d": {"wall_s": 20.0}}}
    assert cold_report.whole_report(cold)["longest"] == [("c", 30.0), ("d", 20.0)]


def test_worst_is_the_first_lowest_row():
    rows = [{"type": "a", "top1": 0.5}, {"type": "b", "top1": 0.25}, {"type": "c", "top1": 0.25}]
    assert helpcenter.worst(rows)["type"] == "b"
    assert helpcenter.worst(rows, "top1") is rows[1]


def test_the_cost_pages_setup_read_from_provenance():
    from studies.peers import findings_setup as setup

    enc = {"provenance": {"corpus": {"passages": 200, "collection": "npl"}, "parameters": {"rounds": 3}}}
    assert setup.encode_setup(enc) == {"passages": 200, "collection": "npl", "rounds": 3}
    assert setup.n_collections({"collections": {"adi": {}, "npl": {}}}) == 2
    assert setup.largest_size({"sizes": {"1000": {}, "100000": {}, "20000": {}}}) == 100000
    assert setup.n_measures({"provenance": {"parameters": {"measures": ["nDCG@10", "RR@10"]}}}) == 2


def test_a_group_of_the_help_center_results():
    res = {"groups": {"segmentation": [{"x": 1}], "models": []}}
    assert helpcenter.group(res, "segmentation") == [{"x": 1}]
    with pytest.raises(KeyError):
        helpcenter.group(res, "nope")
