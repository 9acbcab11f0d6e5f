"""Reports of a check: GNU lines (editors' quickfix lists), JSON lines, SARIF 2.1.0 (code scanning).

- ``gnu``: ``file:line:col: warning: sentence may need a citation (score 0.87) [CW001]``, one line
  per reported flag (flagged, not suppressed, not in the baseline); with ``--suggest`` it ends with
  `` suggest: \\cite{key1}, \\cite{key2}`` (and `` corpus: id, ...`` for papers of ``--corpus``,
  `` works: Title (2017, doi:10.1/x, cited by 3 papers in the corpus); ...`` for ``--works``).
- ``jsonl``: one object per sentence: ``file``, ``line``, ``column``, ``end`` (``line``,
  ``column`` one past the last character), ``text`` (as the model read it), ``score``, ``status``
  (``cited``, ``flagged``, ``ok``; ``suppressed`` / ``baselined`` for a flag silenced by a comment
  or the baseline) and ``fingerprint``; with ``--suggest``, ``suggestions`` (a flag's ranked
  ``key``, ``title``, ``score``, ``source``; a work of ``--works`` adds ``identifier``, ``year``,
  ``cited_by``, ``bibtex``, ``bib`` and ``bib_problem``) and ``cited_ranks`` (a cited sentence's
  keys: ``rank`` of ``of`` entries).
- ``sarif``: one run, one rule (CW001), a result per reported flag with its region (columns in
  Unicode code points) and a partial fingerprint of the sentence text, so code scanning keeps an
  alert's identity when lines move. With ``--suggest``, a result has a ``fix`` per suggested
  entry of the draft's bibliography, inserting its citation at the sentence's end. Suppressed and
  baselined flags are left out: GitHub code scanning shows a SARIF ``suppressions`` entry as an open alert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from urllib.parse import quote

from citeworth.check import RULE_ID
from citeworth.core.io import dumps
from citeworth.core.version import tool_version
from citeworth.drafts import BIBLIOGRAPHY, CORPUS, FLAGGED, WORKS, Sentence, Suggested

MESSAGE = "sentence may need a citation"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "citeworthSentenceText/v1"
RULE = {
    "id": RULE_ID,
    "name": "SentenceMayNeedCitation",
    "shortDescription": {"text": "Sentence may need a citation"},
    "fullDescription": {
        "text": "A sentence of running text that a cite-worthiness model (CiteWorth, Wright & Augenstein "
        "2021) scores at or above the threshold and that carries no citation."
    },
    "help": {
        "text": "Cite a source for the claim, or rephrase it as your own finding. To silence one sentence, "
        "put '% citeworth: ignore' (LaTeX) or '<!-- citeworth: ignore -->' (Markdown) before it; "
        "'% citeworth: off' ... '% citeworth: on' silences a stretch."
    },
    "defaultConfiguration": {"level": "warning"},
}


def gnu_lines(sentences: Sequence[Sentence]) -> list[str]:
    return [f"{s.file}:{s.line}:{s.column}: warning: {MESSAGE} (score {s.score:.2f}) [{RULE_ID}]"
            + _gnu_suggestions(s) for s in sentences if s.status == FLAGGED]


def _gnu_suggestions(sentence: Sentence) -> str:
    """`` suggest: \\cite{a}, \\cite{b}`` (the draft's entries), then corpus papers by identifier,
    then works of the cited-works index."""
    own = [f"\\cite{{{s.key}}}" for s in sentence.suggestions if s.source == BIBLIOGRAPHY]
    corpus = [s.key for s in sentence.suggestions if s.source == CORPUS]
    works = [work_label(s) for s in sentence.suggestions if s.source == WORKS]
    return ((f" suggest: {', '.join(own)}" if own else "")
            + (f" corpus: {', '.join(corpus)}" if corpus else "")
            + (f" works: {'; '.join(works)}" if works else ""))


def work_label(suggested: Suggested) -> str:
    """'Title (2017, doi:10.1/x, cited by 3 papers in the corpus; co-cited with 'X' in 2 papers)'."""
    entry = suggested.entry
    facts = [str(entry.year) if entry.year else "", entry.identifier, cited_by(entry.cited_by)]
    why = "".join(f"; {reason}" for reason in entry.why)
    return f"{suggested.title or suggested.key} ({', '.join(fact for fact in facts if fact)}{why})"


def cited_by(count: int) -> str:
    return f"cited by {count} paper{'s' if count != 1 else ''} in the corpus"


def _suggestion(suggested: Suggested) -> dict:
    found = {"key": suggested.key, "title": suggested.title, "score": suggested.score,
             "source": suggested.source}
    if entry := suggested.entry:
        found |= {"identifier": entry.identifier, "year": entry.year, "cited_by": entry.cited_by,
                  "bibtex": entry.bibtex, "bib": entry.bib, "bib_problem": entry.bib_problem,
                  "why": list(entry.why)}
    return found


def jsonl_lines(sentences: Sequence[Sentence]) -> list[str]:
    return [dumps({"file": s.file, "line": s.line, "column": s.column,
                   "end": {"line": s.end_line, "column": s.end_column}, "text": s.text,
                   "score": None if s.score is None else round(s.score, 4), "status": s.status,
                   "fingerprint": s.fingerprint}
                  | ({"suggestions": [_suggestion(x) for x in s.suggestions]} if s.suggestions else {})
                  | ({"cited_ranks": [asdict(r) for r in s.cited_ranks]} if s.cited_ranks else {}))
            for s in sentences]


def sarif_log(sentences: Sequence[Sentence], notifications: Sequence[str], threshold: float,
              model: str) -> dict:
    """A SARIF 2.1.0 log; ``notifications``: problems with inputs (unreadable files, missing inputs)."""
    results = [_result(s) for s in sentences if s.status == FLAGGED]
    invocation = {
        "executionSuccessful": True,
        "toolExecutionNotifications": [{"level": "warning", "message": {"text": text}}
                                       for text in notifications],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "citeworth", "semanticVersion": tool_version(), "rules": [RULE]}},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": results,
            "properties": {"threshold": threshold, "model": model},
        }],
    }


def _result(sentence: Sentence) -> dict:
    region = {"startLine": sentence.line, "startColumn": sentence.column,
              "endLine": sentence.end_line, "endColumn": sentence.end_column}
    return {
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": {"text": f"Sentence may need a citation (score {sentence.score:.2f}): {sentence.text}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(sentence.file)},
                                            "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: sentence.fingerprint},
        "properties": {"score": round(sentence.score, 4)},
    } | ({"fixes": fixes} if (fixes := _fixes(sentence)) else {})


def _fixes(sentence: Sentence) -> list[dict]:
    """One SARIF fix per suggested bibliography entry: insert its citation at the sentence's end
    (a work of the cited-works index needs its entry added to the .bib too: no fix)."""
    return [{
        "description": {"text": f"Cite {s.key}" + (f": {s.title}" if s.title else "")},
        "artifactChanges": [{
            "artifactLocation": {"uri": quote(sentence.file)},
            "replacements": [{
                "deletedRegion": {"startLine": s.insertion.line, "startColumn": s.insertion.column,
                                  "endLine": s.insertion.line, "endColumn": s.insertion.column},
                "insertedContent": {"text": s.insertion.text},
            }],
        }],
    } for s in sentence.suggestions if s.insertion is not None and s.source == BIBLIOGRAPHY]
