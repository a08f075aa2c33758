import pytest

from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis, parse_synesis
from gabarito.errors import GabaritoError

BLOCK = """ONTOLOGY Alpha_Beta
    topic: T
    description: First line
      continues here
    reasoning: why
END ONTOLOGY
"""


def test_parses_fields_and_multiline_values():
    [c] = parse_synesis(BLOCK)
    assert c.name == "Alpha_Beta"
    assert c.description == "First line continues here"
    assert c.search_name == "Alpha Beta"
    assert set(c.search_fields()) == set(SEARCH_FIELDS)
    assert c.line == 1


def test_accepts_ontology_description():
    [c] = parse_synesis(BLOCK.replace("description:", "ontology_description:"))
    assert c.description == "First line continues here"


@pytest.mark.parametrize("text, line, words", [
    ("ONTOLOGY A\n    description: x\n", 1, "never closed"),
    ("ONTOLOGY A\n    description: x\nONTOLOGY B\n", 3, "inside block"),
    ("END ONTOLOGY\n", 1, "without a matching"),
    ("ONTOLOGY\n", 1, "without a name"),
    ("ONTOLOGY A\n    topic: x\nEND ONTOLOGY\n", 1, "no description"),
    ("ONTOLOGY A\n    description: x\n    description: y\nEND ONTOLOGY\n", 3, "repeated"),
    ("ONTOLOGY A\nnot indented\nEND ONTOLOGY\n", 2, "malformed"),
    ("stray text\n", 1, "expected 'ONTOLOGY"),
])
def test_malformed_blocks_give_line_numbered_one_line_errors(text, line, words):
    with pytest.raises(GabaritoError) as err:
        parse_synesis(text, path="x.syno")
    msg = str(err.value)
    assert msg.startswith(f"x.syno:{line}:") and words in msg and "\n" not in msg


def test_duplicate_concept_name_names_both_lines():
    text = BLOCK + "\n" + BLOCK
    with pytest.raises(GabaritoError, match=r"x.syno:8: duplicate concept name 'Alpha_Beta' \(first defined at line 1\)"):
        parse_synesis(text, path="x.syno")


def test_non_utf8_file(tmp_path):
    p = tmp_path / "bad.syno"
    p.write_bytes(b"ONTOLOGY A\n    description: caf\xe9\nEND ONTOLOGY\n")
    with pytest.raises(GabaritoError, match="bad.syno: not valid UTF-8"):
        load_synesis(p)


def test_real_corpus(corpus_path):
    concepts = load_synesis(corpus_path)
    assert len(concepts) == 1388
    assert len({c.name for c in concepts}) == 1388
    assert all(c.description for c in concepts)
    by = {c.name: c for c in concepts}
    assert "advantage" in by  # the lowercase quirk is kept verbatim
    assert by["Goal_Clarity"].description.endswith("aspirations (")
