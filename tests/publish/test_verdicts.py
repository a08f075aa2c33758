"""Verdict words come from the numbers: the cases that broke the pages once."""

import pytest

from gabarito.measure.report import Report
from gabarito.publish.formatting import plural
from gabarito.publish.verdicts import change_word, p_text, share, span


def test_overlap_of_24_in_40_is_most_not_little():
    assert share(24, 40).large and share(24, 40).word == "a maioria"
    assert share(20, 40).word == "metade" and not share(20, 40).large
    assert share(3, 40).word == "a minoria" and share(0, 40).word == "nenhuma"
    with pytest.raises(ValueError):
        share(41, 40)


def test_p_below_the_display_floor_reads_as_an_inequality():
    assert p_text(0.0001) == "p < 0,001"
    assert p_text(0.034) == "p = 0,034"


def test_one_versus_several():
    assert plural(1, "pergunta", "perguntas") == "1 pergunta"
    assert plural(2, "pergunta", "perguntas") == "2 perguntas"


def test_the_change_word_follows_the_oriented_test():
    r = Report.from_dict({"metrics": {"a": {"m": 0.9}, "b": {"m": 0.1}},
                          "tests": [{"measure": "m", "a": "a", "b": "b", "mean_diff": 0.8, "p_holm": 0.01}]})
    assert change_word(r.compare("a", "b", "m")) == "melhora"
    assert change_word(r.compare("b", "a", "m")) == "piora"
    weak = Report.from_dict({"metrics": {"a": {"m": 0.9}, "b": {"m": 0.1}},
                             "tests": [{"measure": "m", "a": "a", "b": "b", "mean_diff": 0.8, "p_holm": 0.2}]})
    assert change_word(weak.compare("a", "b", "m")) == "não muda de forma detectável"


def test_span_covers_every_value_shown():
    assert span([0.145, 0.571, 0.392, 0.495]) == (0.145, 0.571)
    with pytest.raises(ValueError):
        span([])
