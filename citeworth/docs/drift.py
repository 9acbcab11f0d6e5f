"""Checks that keep the hand-written pages true to the code (``tests/unit/test_docs.py`` runs them on
every page; each returns the problems it finds, as ``page: what``).

- **Lists**: a list of stages, commands, sources, readers, models or environment variables is written between
  ``<!-- list: KIND -->`` and ``<!-- /list -->``; the span must name every member of ``KIND`` (what
  the code has now: ``LIST_KINDS``). A paragraph outside a span that names most of the stages is a
  list nobody checks, and is reported too.
- **Names**: ``citeworth run X``, ``citeworth X``, ``train@X`` and ``CITEWORTH_X`` anywhere on a page
  must be a stage, a command, a model and a variable the code has.
- **Releases**: a sentence that says what a demo release holds agrees with the release calendar
  (``download/demo_releases.tsv``): it does not put in one release what only another one adds.
- **Messages**: a table of failures (its header begins ``| what you see |``) quotes each program
  message as a code span, ``…`` for what varies; every other part is still in the code's text.
- **History**: the pages describe the software, not how it was made: no "the issue", "this work"
  or issue numbers.

The params files' comments say why a value is what it is; the size and make-up of a corpus
(``~2,200 sentences``, ``60% Biology``) is Table 2's, from the data, and a comment that restates it
is reported (``config_figures``).

- **Figures**: a figure from a results file is best written into its page from that file
  (``<!-- figure: FILE:PATH -->`` spans, ``citeworth.docs.reference``). Every other figure of a
  paragraph that names a results file (``works.json``, or its page ``benchmarks/works.md``) must be
  one of that file's values, as rounded on the page (or in percent, minutes, hours, thousands or
  millions); a
  figure from elsewhere (another run, said so in the text; a target, a version, a projection) is
  marked ``<!-- other -->…<!-- /other -->``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from functools import cache

from citeworth.docs.reference import FIGURE, ROOT, results_files

LIST = re.compile(r"(?<!`)<!-- list: ([\w-]+) -->(.*?)<!-- /list -->", re.S)
RELEASES = ROOT / "citeworth" / "download" / "demo_releases.tsv"
# A paragraph naming half the stages or more outside a list span is an unchecked list of the stages.
STAGES_IN_A_LIST = 8


@cache
def stages() -> tuple[str, ...]:
    from citeworth.stages import STAGES
    return tuple(STAGES)


@cache
def dataset_dag_stages() -> tuple[str, ...]:
    from citeworth.orchestration.versioning import DATASET_STAGES
    return tuple(dict.fromkeys(stage.partition("@")[0] for stage in DATASET_STAGES))


@cache
def models_dag_stages() -> tuple[str, ...]:
    from citeworth.orchestration.versioning import MODEL_STAGES
    return tuple(dict.fromkeys(stage.partition("@")[0] for stage in MODEL_STAGES))


@cache
def commands() -> tuple[str, ...]:
    from citeworth import cli
    return ("run", *cli.TOOLS)


@cache
def sources() -> tuple[str, ...]:
    from citeworth.download.params import SOURCES
    return tuple(SOURCES)


@cache
def readers() -> tuple[str, ...]:
    from citeworth.sources import READERS
    return tuple(READERS)


@cache
def models() -> tuple[str, ...]:
    """The models of ``params.yaml``'s catalog (the demo's Table 4)."""
    from citeworth.stages import stage_params
    return tuple(stage_params("train", path=ROOT / "params.yaml").catalog)


@cache
def variables() -> tuple[str, ...]:
    from citeworth.docs.environment import VARIABLES
    return tuple(VARIABLES)


LIST_KINDS: dict[str, Callable[[], tuple[str, ...]]] = {
    "stages": stages, "dataset-dag": dataset_dag_stages, "models-dag": models_dag_stages,
    "commands": commands, "sources": sources, "readers": readers, "models": models,
    "environment": variables,
}


def problems(page: str, text: str, generated: bool = False) -> list[str]:
    """Every drift check's problems on one page. A page generated from the code or a results file
    cannot fall behind what it is made from; it is held only to the words it takes from them."""
    if generated:
        return history(page, text)
    return [*list_problems(page, text), *unchecked_lists(page, text), *unknown_names(page, text),
            *release_problems(page, text), *unknown_messages(page, text), *results_figures(page, text),
            *history(page, text)]


def list_problems(page: str, text: str) -> list[str]:
    found = []
    for kind, span in LIST.findall(text):
        if kind not in LIST_KINDS:
            found.append(f"{page}: unknown list kind {kind!r} (known: {', '.join(LIST_KINDS)})")
            continue
        missing = [name for name in LIST_KINDS[kind]() if not _names_word(span, name)]
        if missing:
            found.append(f"{page}: its list of {kind} lacks {', '.join(missing)}")
    return found


def unchecked_lists(page: str, text: str) -> list[str]:
    outside = LIST.sub("", FIGURE.sub("", text))  # a figure span is written from its results file
    found = []
    for paragraph in re.split(r"\n\s*\n", outside):
        named = [name for name in stages() if _names_word(paragraph, name)]
        if len(named) >= STAGES_IN_A_LIST:
            found.append(f"{page}: a paragraph lists {len(named)} stages outside a <!-- list: stages --> "
                         f"span (it begins {paragraph.strip()[:60]!r})")
    return found


def unknown_names(page: str, text: str) -> list[str]:
    checks = [(r"citeworth run ([a-z_]+)\b", stages(), "stage"),
              (r"^\s*(?:\$ )?citeworth ([a-z][a-z_-]*)\b", commands(), "command"),
              (r"\btrain@([a-z_]+)", models(), "model"),
              (r"(?<![A-Za-z0-9_])(CITEWORTH_[A-Z0-9_]+)", variables(), "environment variable")]
    found = []
    for pattern, known, what in checks:
        for name in sorted(set(_in_code(text, pattern))):
            if name not in known:
                found.append(f"{page}: names the {what} {name!r}, which the code does not have")
    return found


def _in_code(text: str, pattern: str) -> list[str]:
    """Matches of ``pattern`` in code: each line of a code block, each code span (where commands and
    names are written)."""
    blocks = re.findall(r"```.*?```", text, re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line for block in blocks for line in block.splitlines()] + spans
    return [match for line in lines for match in re.findall(pattern, line)]


def release_problems(page: str, text: str) -> list[str]:
    """Sentences that place in one demo release what only another release adds."""
    only = _only_in_release()
    prose = "\n".join(line for line in _without_code_blocks(text).splitlines() if not line.startswith("|"))
    found = []
    prose = prose.replace("Europe PMC", "Europe_PMC")  # a source of its own, not the demo's PMC articles
    for sentence in re.split(r"(?<=[.;])\s+", " ".join(prose.split())):
        releases = [release for release in only if re.search(rf"\b{release}\b", sentence)]
        if len(releases) != 1 or NEGATION.search(sentence):  # "demo-v1 has no PLOS" is no claim it has
            continue
        for other, words in only.items():
            wrong = [word for word in words
                     if other != releases[0] and re.search(rf"\b{re.escape(word)}\b", sentence)]
            if wrong:
                found.append(f"{page}: puts {', '.join(wrong)} in {releases[0]}, but {other} adds it "
                             f"({RELEASES.name}): {sentence[:100]!r}")
    return found


MESSAGE_SOURCES = ("citeworth", "plugins", "tests/integration/programs.py", "Makefile")


def unknown_messages(page: str, text: str) -> list[str]:
    """Quoted messages of failure tables that the code no longer says."""
    found = []
    for table in re.findall(r"^\| what you see \|.*?(?=\n\n|\Z)", text, re.S | re.M):
        for message in re.findall(r"^\| `([^`]+)` \|", table, re.M):
            parts = [part.strip() for part in message.split("…") if part.strip()]
            if missing := [part for part in parts if part not in _code_text()]:
                found.append(f"{page}: quotes the message {message!r}; the code no longer says "
                             f"{missing[0]!r}")
    return found


@cache
def _code_text() -> str:
    """The text of the files messages come from: string literals split over lines joined, and each
    ``{CONSTANT}`` of an f-string as the module constant's value (``{MIRROR_ENV}``: CITEWORTH_MIRROR)."""
    files = [path for name in MESSAGE_SOURCES for path in
             ([ROOT / name] if (ROOT / name).is_file() else sorted((ROOT / name).rglob("*.py")))]
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    text = re.sub(r"([\"'])\s*\n\s*f?\1", "", text)
    for constant, value in re.findall(r'^([A-Z][A-Z0-9_]*) = "([^"{}]*)"$', text, re.M):
        text = text.replace("{" + constant + "}", value)
    return text


NEGATION = re.compile(r"\b(?:no|none|not|neither|nor|without|lacks?)\b", re.I)


@cache
def _only_in_release() -> dict[str, tuple[str, ...]]:
    """Each demo release -> the names (capitalised words, e.g. SciPy, PLOS) only its ``adds`` has."""
    with RELEASES.open(encoding="utf-8") as handle:
        adds = {row["release"]: set(re.findall(r"\b[A-Za-z]*[A-Z][A-Za-z0-9]+\b", row["adds"]))
                for row in csv.DictReader(handle, delimiter="\t")}
    return {release: tuple(sorted(words - set().union(*(w for r, w in adds.items() if r != release))))
            for release, words in adds.items()}


OTHER = re.compile(r"<!-- other -->.*?<!-- /other -->", re.S)
# A decimal (0.397, 2.6) or a whole number in groups of three (2,901): not a year, a version's
# part or an arXiv identifier (2004.14974).
PAGE_FIGURE = re.compile(r"(?<![\w.,])(\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+)(?![\w,]|\.\d)")
ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}")
# How a page may show a value: as it is, in percent, minutes, hours, thousands (MB as GB) or millions.
SCALES = (1, 100, 1 / 60, 1 / 3600, 1e-3, 1e-6)


def results_figures(page: str, text: str) -> list[str]:
    """Figures of paragraphs naming a results file that none of the files it names holds."""
    prose = OTHER.sub("", FIGURE.sub("", re.sub(r"```.*?```", "", text, flags=re.S)))
    found = []
    for paragraph in re.split(r"\n\s*\n", prose):
        named = [name for name in _results_values() if name in paragraph
                 or f"benchmarks/{name.removesuffix('.json')}.md" in paragraph]
        values = [value for name in named for value in _results_values()[name]]
        for figure in PAGE_FIGURE.findall(paragraph) if named else []:
            if not ARXIV_ID.fullmatch(figure) and not _holds(values, figure):
                found.append(f"{page}: {figure} stands beside {', '.join(named)}, which holds no such value: "
                             "write it from the file (<!-- figure: FILE:PATH -->) or, if it comes from "
                             "elsewhere and the text says so, mark it <!-- other -->…<!-- /other -->")
    return found


def _holds(values: list[float], figure: str) -> bool:
    shown = float(figure.replace(",", ""))
    decimals = len(figure.partition(".")[2])
    tolerance = 0.5 * 10 ** -decimals + 1e-9
    return any(abs(value * scale - shown) <= tolerance for value in values for scale in SCALES)


@cache
def _results_values() -> dict[str, tuple[float, ...]]:
    """Each results file -> every number it holds (numbers written in its texts too: Table 4's rows)."""
    def numbers(value) -> list[float]:
        if isinstance(value, dict):
            return [n for item in value.values() for n in numbers(item)]
        if isinstance(value, list):
            return [n for item in value for n in numbers(item)]
        if isinstance(value, str):
            return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", value)]
        return [] if isinstance(value, bool) or value is None else [float(value)]
    return {path.name: tuple(numbers(json.loads(path.read_text(encoding="utf-8"))))
            for path in results_files()}


CORPUS_FIGURE = re.compile(
    r"~\s?\d[\d,]{2,}\s+(?:[a-z-]+\s+){0,2}(?:sentences|papers|pairs|articles)\b"       # ~2,200 sentences
    r"|\d[\d,]*\s*->\s*\d[\d,]*\s+(?:[a-z-]+\s+){0,2}sentences\b"                     # 104 -> 128 sentences
    r"|\bdemo's\s+\d[\d,]*\s+(?:[a-z-]+\s+){0,2}(?:sentences|papers)\b"                # the demo's 1,543 ...
    r"|\d+(?:\.\d+)?%\s+(?:Biology|Medicine|Chemistry|Physics|Psychology|cite-worthy)\b")  # 60% Biology


def config_figures(path: str, text: str) -> list[str]:
    """Comments of a params file that state a corpus's size or make-up."""
    return [f"{path}:{number}: a comment states a corpus figure ({match.group()!r}): Table 2 gives it "
            "from the data (reports/dataset_stats.md); say why the value is chosen instead"
            for number, line in enumerate(text.splitlines(), 1) if "#" in line
            for match in CORPUS_FIGURE.finditer(line.partition("#")[2])]


HISTORY = re.compile(r"\b(?:the|this|that|an?)\s+issue(?:'s)?\b|\bissues?\s+#?\d+|\bthis\s+work\b"
                     r"|\bthis\s+session\b", re.I)


def history(page: str, text: str) -> list[str]:
    return [f"{page}: speaks of how the project was made ({match.group()!r}): say what the software does"
            for match in HISTORY.finditer(text)]


def _names_word(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a word of its own (not a path: ``curate/stage.py``)."""
    return re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", text) is not None


def _without_code_blocks(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)
