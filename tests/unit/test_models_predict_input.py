"""``citeworth predict`` refuses input the curation would quarantine, naming the file and the line
or paragraph, before any sentence splitting (and so before spaCy's or pysbd's limits)."""

from __future__ import annotations

import pytest

from citeworth.curate.config import CurationConfig
from citeworth.models.predict import iter_paragraphs

LIMIT = CurationConfig.model_fields["max_paragraph_chars"].default


@pytest.mark.parametrize(("name", "data", "message"), [
    ("draft.txt", b"A first paragraph here.\n\nA second one\xff here.", r"draft.txt: not UTF-8 text"),
    ("nested.jsonl", b'{"text": "Fine."}\n' + b"[" * 200_000 + b"\n", r"nested.jsonl:2: too_deeply_nested"),
    ("surrogate.jsonl", b'{"text": "A \\ud800 here."}\n', r"surrogate.jsonl:1: invalid_unicode"),
    ("broken.jsonl", b'{"text": "unterminated\n', r"broken.jsonl:1: malformed_json"),
    ("shape.jsonl", b'{"samples": [1, 2]}\n', r"shape.jsonl:1: a record needs 'samples'"),
    ("long.txt", b"Short one.\n\n" + b"A long sentence. " * (LIMIT // 10),
     r"long.txt: paragraph 2 has [\d,]+ characters"),
    ("long.jsonl", b'{"text": "' + b"x" * (LIMIT + 1) + b'"}\n', r"long.jsonl:1 has [\d,]+ characters"),
])
def test_bad_input_is_an_error_naming_its_file(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message):
        list(iter_paragraphs([], [path]))


def test_a_long_text_argument_is_refused_too():
    with pytest.raises(ValueError, match=r"--text 2 has [\d,]+ characters, over the"):
        list(iter_paragraphs(["Fine here.", "y" * (LIMIT + 1)], []))
