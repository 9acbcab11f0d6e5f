"""The stock scispacy pipeline the curation's sentences are defined by, and the rules exported from it.

``stock_pipeline()`` is spaCy's blank English pipeline with scispacy's ``combined_rule_tokenizer``
(plus the one infix citeworth adds) and scispacy's ``pysbd_sentencizer``: what the curation
splits with by definition. ``citeworth.text.tokenizer`` runs its tokenizer's rules without spaCy;
they are exported into ``scispacy_tokenizer.json`` by this module (spaCy and scispacy are the
pipeline's dependencies, not an author's):

    python -m citeworth.text.scispacy_rules --write   # after upgrading spaCy or scispacy
    python -m citeworth.text.scispacy_rules --check   # exit 1 if the shipped file is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

from citeworth.text.tokenizer import RULES_FILE

RULES_PATH = Path(__file__).with_name(RULES_FILE)


def stock_tokenizer(nlp=None):
    """scispacy's ``combined_rule_tokenizer`` on a blank English pipeline, with citeworth's infix."""
    import spacy
    from scispacy.custom_tokenizer import combined_rule_tokenizer

    nlp = nlp or spacy.blank("en")
    with warnings.catch_warnings():  # spaCy warns about a character class in scispacy's regexes
        warnings.simplefilter("ignore", FutureWarning)
        tokenizer = combined_rule_tokenizer(nlp)
    # pysbd ends a sentence at "work." even when a citation is glued to it ("work.{{cite:...}}",
    # "work.[3]"), but scispacy drops a sentence whose end is not a token boundary: add one there.
    infixes = tokenizer.infix_finditer.__self__.pattern
    tokenizer.infix_finditer = re.compile(rf"{infixes}|(?<=[.!?])(?=[\[{{])").finditer
    return tokenizer


def stock_pipeline():
    """The pipeline that defines the curation's sentences: ``nlp.pipe(texts)`` then ``doc.sents``."""
    import spacy
    from scispacy import custom_sentence_segmenter  # noqa: F401  (registers pysbd_sentencizer)

    from citeworth.text import pysbd_regex

    pysbd_regex.install()
    nlp = spacy.blank("en")
    nlp.tokenizer = stock_tokenizer(nlp)
    nlp.add_pipe("pysbd_sentencizer")
    return nlp


def exported_rules() -> dict:
    """The rules of ``stock_tokenizer()`` and scispacy's abbreviations, as ``RuleTokenizer`` reads them."""
    import scispacy
    import spacy
    from scispacy.consts import ABBREVIATIONS
    from spacy.symbols import ORTH

    tokenizer = stock_tokenizer()

    def pattern(function) -> str | None:
        return None if function is None else function.__self__.pattern

    for function in (tokenizer.prefix_search, tokenizer.suffix_search, tokenizer.infix_finditer):
        if function.__self__.flags != re.UNICODE:  # the patterns are stored without their flags
            raise ValueError(f"{function.__self__.pattern[:40]}...: flags {function.__self__.flags}")
    if not tokenizer.faster_heuristics:  # RuleTokenizer matches the phrases of faster_heuristics
        raise ValueError("the tokenizer's faster_heuristics is off")
    special_cases = {string: [piece[ORTH] for piece in pieces] for string, pieces in tokenizer.rules.items()}
    return {
        "about": "scispacy's combined_rule_tokenizer with citeworth's infix, exported by "
                 "`python -m citeworth.text.scispacy_rules --write`; read by citeworth.text.tokenizer",
        "spacy": spacy.__version__, "scispacy": scispacy.__version__,
        "prefix": pattern(tokenizer.prefix_search), "suffix": pattern(tokenizer.suffix_search),
        "infix": pattern(tokenizer.infix_finditer), "token_match": pattern(tokenizer.token_match),
        "url_match": pattern(tokenizer.url_match),
        "special_cases": special_cases, "abbreviations": sorted(ABBREVIATIONS),
    }


def rules_text() -> str:
    return json.dumps(exported_rules(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"write {RULES_PATH.name}")
    action.add_argument("--check", action="store_true", help=f"exit 1 if {RULES_PATH.name} is stale")
    args = parser.parse_args(argv)
    text = rules_text()
    if args.write:
        RULES_PATH.write_text(text, encoding="utf-8")
        return 0
    if RULES_PATH.read_text(encoding="utf-8") != text:
        print(f"{RULES_PATH} is stale: python -m citeworth.text.scispacy_rules --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
