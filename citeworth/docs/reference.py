"""The documentation site's reference pages, generated from the code and the files they describe.

Each page is a function of what it documents, so ``tests/unit/test_docs.py`` fails when one is stale
(as ``tests/unit/test_pipeline_graph.py`` does for dvc.yaml's code deps)::

    python -m citeworth.docs.reference            # list the generated files
    python -m citeworth.docs.reference --write    # rewrite the stale ones
    python -m citeworth.docs.reference --check    # exit 1 when one differs

What each page is made from, whatever exists when it runs (a new command, flag, stage, param,
results file or deviation shows up without a change here):

- ``reference/cli.md``: the parser of ``citeworth`` and of every subcommand in ``cli.TOOLS`` (the
  parser each tool's ``main`` builds, taken as it is about to parse);
- ``reference/params.md``: every stage of ``stages.STAGES``, its params model's keys (type, default,
  help) and params.yaml's values;
- ``reference/dvc-stages.md``, ``reference/outputs.md`` and ``assets/pipeline.svg``: dvc.yaml's
  stages as DVC resolves them (foreach and matrix cells, params.yaml's paths);
- ``reference/benchmarks/<name>.md``: every figure of ``benchmarks/results/<name>.json`` with the
  command, machine and date the file records, and their entries in mkdocs.yml's nav;
- ``reference/deviation-figures.md``: ``docs/deviations.json``;
- ``study-results.md``: ``benchmarks/results/study.json`` (``citeworth/docs/study_results.py``);
- ``authors/model-card.md``: the card of the model the study ships, as ``benchmarks/author.py``
  recorded it in ``benchmarks/results/author.json``;
- ``reference/environment.md``: every ``CITEWORTH_*`` variable (``citeworth/docs/environment.py``);
- ``changelog.md``, ``license.md`` and ``citing.md``: the project's ``CHANGELOG.md``, ``LICENSE`` and
  ``CITATION.cff``, which live at its root (outside the site's folder);
- the figures of every hand-written page (``hand_written_pages``) between ``<!-- figure: NAME -->`` and
  ``<!-- /figure -->``: a named figure (``figures``: `make demo`'s time from a fresh clone and its
  phases, from the ``fresh_clone`` run of ``benchmarks/results/demo_phases.json``), or any value of a
  results file, ``<!-- figure: FILE:KEY/KEY/...|FORMAT -->`` (``works.json:quality/queries``,
  ``study.json:dataset/overall/cite_worthy_share|.1%``: a Python format spec, or a unit of
  ``UNITS``; whole numbers get thousands separators by default). A figure a page takes from a
  results file is thus written from it.

Nothing here imports MkDocs: the pages are plain Markdown, built by ``make docs``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import chdir, contextmanager
from html import escape
from pathlib import Path
from typing import Any

from citeworth import cli
from citeworth.core.io import write_text
from citeworth.docs.environment import environment_page, read_by
from citeworth.docs.study_results import study_results_page
from citeworth.stages import STAGES, params_keys

ROOT = Path(__file__).resolve().parents[2]  # the project: its docs/, dvc.yaml, benchmarks/
DOCS = ROOT / "docs"
REGENERATE = "python -m citeworth.docs.reference --write"
# mkdocs.yml's nav lines between these two comments list the benchmark results pages.
NAV_BEGIN = "# generated: the benchmark results pages (python -m citeworth.docs.reference --write)"
NAV_END = "# end of the generated benchmark results pages"
USAGE_WIDTH = 80  # argparse wraps usage lines to the terminal's width; the pages must not vary


def generated() -> dict[Path, str]:
    """Every generated file (relative to the project) -> its text."""
    with chdir(ROOT):  # paths in the code's defaults are relative to the project, as for a user
        pages = {
            "reference/cli.md": cli_page(),
            "reference/params.md": params_page(),
            "reference/deviation-figures.md": deviations_page(),
            "reference/benchmarks/index.md": benchmarks_index(),
            "reference/environment.md": environment_page(read_by(ROOT)),
            **root_files_pages(),
        }
        stages = dvc_stages()
        pages["reference/dvc-stages.md"] = dvc_stages_page(stages)
        pages["reference/outputs.md"] = outputs_page(stages)
        pages["assets/pipeline.svg"] = pipeline_svg(stages)
        for path in results_files():
            pages[f"reference/benchmarks/{path.stem}.md"] = benchmark_page(path)
        if (study := study_results_page(ROOT)) is not None:
            pages["study-results.md"] = study
        if (card := model_card_page()) is not None:
            pages["authors/model-card.md"] = card
    files = {Path("docs") / name: text for name, text in pages.items()}
    values = figures()
    for page in hand_written_pages():
        files[page] = with_figures((ROOT / page).read_text(encoding="utf-8"), values, str(page))
    files[Path("mkdocs.yml")] = with_benchmark_nav((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return files


def _generated_from(source: str) -> str:
    return f"<!-- Generated from {source} by `{REGENERATE}`: edit those, not this page. -->\n"


def _text(text: str) -> str:
    """``text`` safe in a Markdown table cell: code spans kept (a pipe in one splits no cell),
    everything else shown as written."""
    text, shown, start = " ".join(str(text).split()), [], 0
    for span in re.finditer(r"(`+).+?\1", text):
        shown += [_escape_markup(text[start:span.start()]), span.group()]
        start = span.end()
    return "".join([*shown, _escape_markup(text[start:])])


def _escape_markup(text: str) -> str:
    text = re.sub(r"([\\*_\[\]|])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _code(text: Any) -> str:
    text = " ".join(str(text).split())
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _anonymous(text: str) -> str:
    """``text`` with this checkout's own path in words (a default the code takes from where it runs)."""
    return text.replace(str(ROOT), "this checkout")


# -- the command line -------------------------------------------------------------------------------


class _Built(Exception):
    """A tool's parser, caught as its ``main`` was about to parse."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__(parser.prog)
        self.parser = parser


@contextmanager
def _stopped_at_parse() -> Iterator[None]:
    """``ArgumentParser.parse_args`` raising the parser it was called on, so that a tool's ``main``
    hands over the parser it builds (tools build theirs inside ``main``) and does nothing else."""
    original = argparse.ArgumentParser.parse_args

    def stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Built(self)

    argparse.ArgumentParser.parse_args = stop  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]


def tool_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``citeworth NAME`` (a tool of ``cli.TOOLS``)."""
    module, _, attr = cli.TOOLS[name][0].partition(":")
    main: Callable[[list[str]], int] = getattr(importlib.import_module(module), attr)
    with _stopped_at_parse():
        try:
            main([])
        except _Built as built:
            return built.parser
    raise RuntimeError(f"citeworth {name}: its main() parsed no arguments")


def command_parsers() -> list[argparse.ArgumentParser]:
    """``citeworth``'s parser, then every subcommand's and each of their subcommands', in the
    order ``citeworth --help`` lists them."""
    top = cli._parser()
    parsers = [top]
    for name, parser in _subcommands(top).items():
        parsers += _with_subcommands(tool_parser(name) if name in cli.TOOLS else parser)
    return parsers


def _with_subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for sub in _subcommands(parser).values():
        found += _with_subcommands(sub)
    return found


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()}


def _subcommand_help(parser: argparse.ArgumentParser) -> dict[str, str]:
    return {choice.dest: choice.help or "" for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for choice in action._choices_actions}


def cli_page() -> str:
    parsers = command_parsers()
    lines = [_generated_from("the argparse parsers of `citeworth` and its subcommands"),
             "# Command line\n",
             "Every `citeworth` command and option, from the parsers that read them; "
             "`citeworth COMMAND --help` prints the same. A stage's parameters are no options: "
             "they are listed in the [params reference](params.md).\n"]
    for parser in parsers:
        lines.append(_command_section(parser))
    return _anonymous("\n".join(lines))


def _slug(heading: str) -> str:
    """The anchor MkDocs' toc extension gives a heading of plain words."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def _command_section(parser: argparse.ArgumentParser) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    parts = [f"## {parser.prog}\n", "```text", formatter.format_help().strip(), "```\n"]
    if parser.description:
        parts.append(_paragraphs(parser.description) + "\n")
    options = [action for action in parser._actions if not isinstance(action, argparse._SubParsersAction)
               and action.help != argparse.SUPPRESS]
    if options:
        parts.append(_table(["argument", "value", "default", "what"],
                            ([_code(", ".join(action.option_strings) or action.dest), _value(action),
                              _default(action), _text(_expanded_help(parser, action))]
                             for action in options)))
    if commands := _subcommand_help(parser):
        parts.append(_table(["command", "what"],
                            ([f"[`{parser.prog} {name}`](#{_slug(f'{parser.prog} {name}')})", _text(text)]
                             for name, text in commands.items())))
    if parser.epilog:
        parts.append(_paragraphs(parser.epilog) + "\n")
    return "\n".join(parts)


def _paragraphs(text: str) -> str:
    """A description or epilog: prose paragraphs as text, indented or listed lines as written."""
    blocks = [block for block in re.split(r"\n\s*\n", text.strip()) if block.strip()]
    shown = []
    for block in blocks:
        if any(line.startswith((" ", "\t")) for line in block.splitlines()[1:]) or block.startswith(" "):
            shown.append("```text\n" + block.rstrip() + "\n```")
        else:
            shown.append(_text(block))
    return "\n\n".join(shown)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "(a switch)"
    if action.choices is not None:
        return " \\| ".join(_code(choice) for choice in action.choices)
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    shown = _code(metavar)
    if action.nargs in ("*", "+", argparse.REMAINDER):
        shown += " ..."
    if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
        shown += " (repeatable)"
    return shown


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if action.default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return _code(action.default)


def _expanded_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=USAGE_WIDTH)
    return formatter._expand_help(action) if action.help else ""


# -- stage params -----------------------------------------------------------------------------------


def params_page() -> str:
    lines = [_generated_from("each stage's params model (`citeworth/stages.py` lists the stages) and "
                             "`params.yaml`"),
             "# Stage params\n",
             "Every key of every stage's params: its type, its default (in the code; *required* "
             "where `params.yaml` must give it) and below it the value `params.yaml` gives it where it "
             "gives one, and its help. `citeworth run STAGE --help` prints the same; `-S KEY=VALUE` sets one "
             "([overrides](../params.md)). A key path is dotted from the stage's section: "
             "`NAME` stands for any entry of a mapping, `[]` for every item of a list.\n"]
    for name in STAGES:
        lines.append(f"## {name}\n")
        lines.append(f"`citeworth run {name}`, section `{name}` of `params.yaml`.\n")
        lines.append(_table(["key", "type", "default", "what"],
                            ([_code(key.path), _code(key.type), _default_and_given(key.default, given),
                              _text(key.help)] for key, given in params_keys(name, ROOT / "params.yaml"))))
    return "\n".join(lines)


def _default_and_given(default: str, given: str | None) -> str:
    shown = "*required*" if default == "required" else _code(default)
    return shown + (f"<br>params.yaml: {_code(given)}" if given is not None else "")


# -- dvc.yaml ---------------------------------------------------------------------------------------


def dvc_stages() -> list[dict[str, Any]]:
    """dvc.yaml's stages as DVC resolves them: name, command, deps, params, outputs."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    stages = []
    with Repo(str(ROOT)) as repo:
        for stage in repo.index.stages:
            params = [(dep.def_path, key) for dep in stage.deps if isinstance(dep, ParamsDependency)
                      for key in dep.params]
            stages.append({
                "name": stage.addressing,
                "cmd": stage.cmd,
                "deps": [dep.def_path for dep in stage.deps if not isinstance(dep, ParamsDependency)],
                "params": [key if path == "params.yaml" else f"{path}:{key}" for path, key in params],
                "outs": [{"path": out.def_path, "cached": out.use_cache, "metric": bool(out.metric),
                          "plot": bool(out.plot)} for out in stage.outs],
            })
    return stages


def _group(name: str) -> str:
    """A dvc.yaml stage's entry: ``train`` for its matrix cell ``train@tfidf_lr``."""
    return name.partition("@")[0]


def _code_deps(deps: list[str]) -> tuple[list[str], list[str]]:
    code = [dep for dep in deps if dep.startswith("citeworth/")]
    return [dep for dep in deps if dep not in code], code


def dvc_stages_page(stages: list[dict[str, Any]]) -> str:
    lines = [_generated_from("`dvc.yaml`, resolved by DVC with `params.yaml`"),
             "# dvc.yaml stages\n",
             "The stages `dvc repro` runs, as DVC reads them: a `foreach` or `matrix` entry is one "
             "stage per cell (`curate@baseline`, `train@tfidf_lr`), and every path is `params.yaml`'s. "
             "Each runs `citeworth run` over its own params section, like the CLI and the Airflow DAGs "
             "([the three doors](../ARCHITECTURE.md#the-three-doors)). Code deps are what the stage "
             "imports (`python -m citeworth.orchestration.dvc_code_deps --write`). What each stage "
             "writes: [outputs](outputs.md).\n",
             "![The pipeline: dvc.yaml's stages and what each needs](../assets/pipeline.svg)\n",
             _table(["stage", "command", "data it reads", "params"],
                    ([f"[`{stage['name']}`](#{_slug(stage['name'])})", _code(stage["cmd"]),
                      ", ".join(_code(dep) for dep in _code_deps(stage["deps"])[0]),
                      ", ".join(_code(key) for key in stage["params"])] for stage in stages))]
    for stage in stages:
        data, code = _code_deps(stage["deps"])
        lines += [f"## {stage['name']}\n", f"Command: {_code(stage['cmd'])}\n",
                  "Reads: " + (", ".join(_code(dep) for dep in data) or "no data") + "\n",
                  "Params: " + ", ".join(_code(key) for key in stage["params"]) + "\n",
                  "Writes: " + ", ".join(_code(out["path"]) for out in stage["outs"]) + "\n",
                  "Code: " + (", ".join(_code(dep) for dep in code) or "none") + "\n"]
    return "\n".join(lines)


def _kind(out: dict[str, Any]) -> str:
    kind = "metric" if out["metric"] else "plot" if out["plot"] else "output"
    return f"{kind}, in the DVC cache" if out["cached"] else f"{kind}, in git (`cache: false`)"


def outputs_page(stages: list[dict[str, Any]]) -> str:
    rows = sorted((out["path"], stage["name"], _kind(out)) for stage in stages for out in stage["outs"])
    return "\n".join([
        _generated_from("`dvc.yaml`'s outputs, metrics and plots, resolved by DVC with `params.yaml`"),
        "# Output files\n",
        "Every file and folder a `dvc.yaml` stage writes, where `params.yaml` puts it. Outputs in the DVC "
        "cache come back with `dvc pull`; those in git (`cache: false`: metrics, plots, tables) are "
        "committed with `dvc.lock`. `dvc metrics show` and `dvc plots show` read the metrics and "
        "plots. [The dvc.yaml stages](dvc-stages.md) say what each stage reads; the guides say what is in "
        "each file.\n",
        _table(["path", "written by", "kind"],
               ([_code(path), f"[`{name}`](dvc-stages.md#{_slug(name)})", kind]
                for path, name, kind in rows)),
    ])


def pipeline_svg(stages: list[dict[str, Any]]) -> str:
    """dvc.yaml's stages as a left-to-right graph: one box per dvc.yaml entry (its cells named
    under it), an arrow where a stage reads what another writes (implied arrows left out)."""
    groups: dict[str, list[str]] = {}
    for stage in stages:
        groups.setdefault(_group(stage["name"]), []).append(stage["name"].partition("@")[2])
    writes = {(_group(stage["name"]), out["path"]) for stage in stages for out in stage["outs"]}
    needs = {_group(stage["name"]): set() for stage in stages}
    for stage in stages:
        for dep in stage["deps"]:
            needs[_group(stage["name"])] |= {group for group, path in writes if _within(dep, path)
                                             and group != _group(stage["name"])}
    edges = _without_implied({(before, after) for after, befores in needs.items() for before in befores})
    column: dict[str, int] = {}
    for group in groups:
        _column(group, needs, column)
    columns: dict[int, list[str]] = {}
    for group in groups:
        columns.setdefault(column[group], []).append(group)
    row: dict[str, float] = {}
    for index in sorted(columns):  # each box near the boxes it comes from
        placed = sorted(columns[index], key=lambda g: (_mean([row[b] for b, a in edges if a == g]), g))
        for position, group in enumerate(placed):
            row[group] = position - (len(placed) - 1) / 2
    width, height, gap_x, gap_y = 150, 46, 64, 26
    top = max(len(placed) for placed in columns.values()) * (height + gap_y) / 2
    box = {group: (16 + column[group] * (width + gap_x),
                   16 + top + row[group] * (height + gap_y) - height / 2) for group in groups}
    svg_width = 32 + len(columns) * width + (len(columns) - 1) * gap_x
    svg_height = 32 + 2 * top
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{svg_width:.0f}" height="{svg_height:.0f}" '
             f'viewBox="0 0 {svg_width:.0f} {svg_height:.0f}" font-family="sans-serif">',
             "<title>The pipeline: dvc.yaml's stages, each after the stages whose outputs it reads</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#546e7a"/></marker></defs>',
             f'<rect width="{svg_width:.0f}" height="{svg_height:.0f}" fill="#ffffff"/>']
    for before, after in sorted(edges):
        (x1, y1), (x2, y2) = box[before], box[after]
        x1, y1, y2 = x1 + width, y1 + height / 2, y2 + height / 2
        middle = (x1 + x2) / 2
        parts.append(f'<path d="M{x1:.0f},{y1:.0f} C{middle:.0f},{y1:.0f} {middle:.0f},{y2:.0f} '
                     f'{x2:.0f},{y2:.0f}" fill="none" stroke="#546e7a" stroke-width="1.5" '
                     'marker-end="url(#arrow)"/>')
    for group, cells in groups.items():
        x, y = box[group]
        named = [cell for cell in cells if cell]
        cell_line = " · ".join(named) if len(" · ".join(named)) <= 22 else f"{len(named)} cells"
        parts.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{width}" height="{height}" rx="6" '
                     'fill="#e8eaf6" stroke="#3f51b5" stroke-width="1.5"/>')
        parts.append(f'<text x="{x + width / 2:.0f}" y="{y + (20 if named else 28):.0f}" font-size="15" '
                     f'text-anchor="middle" fill="#1a237e">{escape(group)}</text>')
        if named:
            parts.append(f'<text x="{x + width / 2:.0f}" y="{y + 37:.0f}" font-size="11" '
                         f'text-anchor="middle" fill="#37474f">{escape(cell_line)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _within(dep: str, out: str) -> bool:
    """A dep path reads an output path: the same, or one inside the other."""
    return dep == out or dep.startswith(out.rstrip("/") + "/") or out.startswith(dep.rstrip("/") + "/")


def _without_implied(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The edges no longer path implies (a transitive reduction of the acyclic graph)."""
    after: dict[str, set[str]] = {}
    for before, later in edges:
        after.setdefault(before, set()).add(later)

    def reaches(start: str, goal: str, skip: tuple[str, str]) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in after.get(node, ()):
                if (node, nxt) != skip and nxt not in seen:
                    if nxt == goal:
                        return True
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    return {edge for edge in edges if not reaches(edge[0], edge[1], edge)}


def _column(group: str, needs: dict[str, set[str]], column: dict[str, int]) -> int:
    """The longest chain of stages before ``group``."""
    if group not in column:
        column[group] = 1 + max((_column(before, needs, column) for before in needs[group]), default=-1)
    return column[group]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# -- figures in hand-written pages -----------------------------------------------------------------

# The pages that give `make demo`'s time (from figure spans only: a test fails where one types it).
DEMO_TIME_PAGES = ("README.md", "docs/getting-started.md", "docs/researchers/demo-results.md",
                   "docs/researchers/deviations.md", "docs/researchers/models.md")
FIGURE = re.compile(r"(<!-- figure: ([^>]+?) -->)(.*?)(<!-- /figure -->)", re.S)
RESULTS = ROOT / "benchmarks" / "results"
DEMO_PHASES = RESULTS / "demo_phases.json"
FRESH_CLONE = "fresh_clone"  # demo_phases.py --fresh --label fresh_clone: `make demo` as a newcomer runs it


def hand_written_pages() -> list[Path]:
    """The README and every page of the site that is not generated (a generated page opens with the
    comment that says so)."""
    pages = [Path("README.md"), *(path.relative_to(ROOT) for path in sorted(DOCS.rglob("*.md")))]
    return [page for page in pages if not is_generated((ROOT / page).read_text(encoding="utf-8"))]


def is_generated(text: str) -> bool:
    return text.startswith("<!-- Generated from")


def with_figures(text: str, values: dict[str, str], page: str) -> str:
    """``text`` with each figure span's content replaced by its value: a named figure, or a results
    file's (``FILE:PATH|FORMAT``)."""
    def value(match: re.Match) -> str:
        name = match[2]
        if ":" in name:
            return match[1] + results_figure(name, page) + match[4]
        if name not in values:
            raise KeyError(f"{page}: no figure {name!r} (known: {', '.join(sorted(values))}, or FILE:PATH)")
        return match[1] + values[name] + match[4]
    return FIGURE.sub(value, text)


# Format specs of results figures beyond Python's: bytes in MB or GB, seconds in hours or minutes.
UNITS: dict[str, Callable[[float], str]] = {
    "MB": lambda value: f"{value / 1e6:,.0f} MB", "GB": lambda value: f"{value / 1e9:,.1f} GB",
    "hours": lambda value: f"{value / 3600:,.1f}", "minutes": lambda value: f"{value / 60:,.1f}",
}


def results_figure(name: str, page: str) -> str:
    """``works.json:speed/whole_study_index/works|,`` -> that value of benchmarks/results/works.json,
    formatted."""
    file, _, rest = name.partition(":")
    path, _, spec = rest.partition("|")
    try:
        value = json.loads((RESULTS / file).read_text(encoding="utf-8"))
        for key in path.split("/"):
            value = value[int(key)] if isinstance(value, list) else value[key]
    except (OSError, KeyError, IndexError, ValueError) as exc:
        raise KeyError(f"{page}: figure {name!r}: benchmarks/results/{file} has no {path!r} "
                       f"({type(exc).__name__}: {exc})") from None
    if spec in UNITS:
        return UNITS[spec](value)
    if spec:
        return format(value, spec)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def figures() -> dict[str, str]:
    """Every figure a hand-written page may carry, by name."""
    runs = json.loads(DEMO_PHASES.read_text(encoding="utf-8"))
    run = runs[FRESH_CLONE]
    values = {"demo-time": _minutes(run["fresh_clone_s"]), "demo-phases": _demo_phases(run),
              "demo-table4": "\n\n" + "\n".join(run["table4"]) + "\n\n",  # a table is a block of its own
              "demo-setups": _setups(runs)}
    if before := runs.get(f"{FRESH_CLONE}_before"):
        values["demo-time-before"] = _minutes(before["fresh_clone_s"])
    study = json.loads((RESULTS / "study.json").read_text(encoding="utf-8"))
    values["study-minutes"] = f"{study['make_study']['wall_s'] / 60:.1f}"
    if (RESULTS / "resources.json").exists():
        values.update(_resources(json.loads((RESULTS / "resources.json").read_text(encoding="utf-8"))))
    if (faults := RESULTS / "faults.json").exists():
        values["faults-table"] = _faults_table(json.loads(faults.read_text(encoding="utf-8")))
    for source in ("elife", "europepmc"):  # the files each registry of real articles pins
        registry = ROOT / "citeworth" / "download" / f"{source}_files.tsv"
        values[f"{source}-articles"] = f"{len(registry.read_text(encoding='utf-8').splitlines()) - 1:,}"
    return values


def _resources(data: dict) -> dict[str, str]:
    """Where the demo's and the study's disk goes, and each demo stage's peak memory (MiB)."""
    def listed(sizes: dict[str, float]) -> str:
        largest_first = sorted(sizes.items(), key=lambda item: -item[1])
        return ", ".join(f"`{name}` {mib:,.0f}" for name, mib in largest_first if mib >= 1)
    return {"resources-demo-folders": listed(data["demo"]["disk_mib"]),
            "resources-study-folders": listed(data["study"]["disk_mib"]),
            "resources-demo-stages": listed(data["demo"]["memory"]["stages_mib"])}


def _faults_table(data: dict) -> str:
    """One row per fault of the fault suite's last run (a block of its own, as a table must be)."""
    def redone(fault: dict) -> str:
        shards = fault["rerun_shards_redone"] + fault["rerun_shards_reused"]
        return f"{fault['rerun_shards_redone']} of {shards}" if shards else "none: its release is versioned"

    rows = [[fault["fault"], fault["outcome"], f"{fault['recovery_seconds']:.0f} s",
             str(fault["tasks_retried"]), redone(fault),
             str(fault["objects_lost"]), str(fault["half_published"]), fault["setting"],
             f"`{fault['commit']}`"]
            for fault in data["faults"]]
    header = ["fault", "run", "recovered in", "tasks retried", "shards redone by a rerun", "objects lost",
              "half-published", "what makes it so", "at commit"]
    return "\n\n" + _table(header, rows) + "\n\n"


def _setups(runs: dict) -> str:
    """The install's range over the runs the pages cite (the same setup): pip reads the package index
    each time."""
    walls = sorted(runs[label]["setup"]["wall_s"] for label in (FRESH_CLONE, f"{FRESH_CLONE}_before")
                   if label in runs)
    return f"{_short(walls[0])} to {_short(walls[-1])}" if len(walls) > 1 else _short(walls[0])


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _demo_phases(run: dict) -> str:
    """Where a fresh clone's `make demo` spends its time, from the stage processes' walls."""
    data_s, side_s = (run["phases"][phase]["wall_span_s"] for phase in ("data", "side_by_side"))
    rest_s = run["demo"]["wall_s"] - data_s - side_s
    side = [p for p in run["processes"] if p["stage"] in run["phases"]["side_by_side"]["stages"]]
    walls = ", ".join(f"{p['stage']} {_short(p['wall_s'])}" for p in sorted(side, key=lambda p: -p["wall_s"]))
    return (f"**{_minutes(run['fresh_clone_s'])}** in all (rev `{run['rev'][:8]}`, "
            f"{run['machine']['cores']} cores, load average {run['load_average_during']['mean']} "
            "during the demo): "
            f"setup {_short(run['setup']['wall_s'])}, download to validate {_short(data_s)}, the stages "
            f"side by side {_short(side_s)} (each process's wall: {walls}), then `dvc commit`, the report "
            f"and the rest {_short(rest_s)}")


def _short(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


# -- the shipped model's card ---------------------------------------------------------------------

def model_card_page() -> str | None:
    """The card (README.md) of the model package the study ships, from ``author.json``: its Hugging
    Face header as a YAML block, then its text."""
    path = ROOT / "benchmarks" / "results" / "author.json"
    if not path.exists():
        return None
    results = json.loads(path.read_text(encoding="utf-8"))
    header, _, body = results["card"].removeprefix("---\n").partition("\n---\n")
    return (_generated_from("`benchmarks/results/author.json` (`card`)") + body.lstrip("\n")
            + f"\n## The card's header\n\nThe package `{results['package']}` carries this card as its "
            "`README.md`, with the Hugging Face model card header:\n\n```yaml\n" + header.strip() + "\n```\n")


# -- benchmark results ------------------------------------------------------------------------------


def results_files() -> list[Path]:
    return sorted(RESULTS.glob("*.json"))


def benchmarks_index() -> str:
    rows = []
    for path in results_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        commands = [value for key, value in _leaves(data) if key.rpartition(".")[2] == "command"]
        rows.append([f"[`{path.name}`]({path.stem}.md)", _code(commands[0]) if commands else "not recorded",
                     ", ".join(_dates(data)) or "not recorded"])
    return "\n".join([
        _generated_from("`benchmarks/results/*.json`"),
        "# Benchmark results\n",
        "Every figure of every results file under `benchmarks/results/`, one page per file, as the "
        "benchmark wrote it, with the command, machine and date where the file records them. "
        "[Benchmarks](../../benchmarks/index.md) says what each benchmark measures and why.\n",
        _table(["results file", "command", "date"], rows),
    ])


def benchmark_page(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    leaves = list(_leaves(data))
    script = ROOT / "benchmarks" / f"{path.stem}.py"
    facts = [("results file", _code(f"benchmarks/results/{path.name}"))]
    if script.exists():
        facts.append(("script", _code(script.relative_to(ROOT).as_posix())))
    commands = [(f"command ({key})" if "." in key else "command", _code(value))
                for key, value in leaves if key.rpartition(".")[2] == "command"]
    facts += commands or [("command", "not recorded")]
    machine = [f"{key}: {_code(json.dumps(value))}" for key, value in leaves if _is_machine(key)]
    facts.append(("machine", "; ".join(machine) or "not recorded"))
    facts.append(("date", ", ".join(_dates(data)) or "not recorded in the file"))
    lines = [_generated_from(f"`benchmarks/results/{path.name}`"),
             f"# {path.stem}\n",
             _table(["run", "as the file records it"], ([name, value] for name, value in facts))]
    if not isinstance(data, dict):
        return "\n".join([*lines, *_figures(data)])
    scalars = {key: value for key, value in data.items() if not _is_nested(value)}
    if scalars:
        lines += _figures(scalars)
    for key, value in data.items():
        if key not in scalars:
            lines += [f"## {key}\n", *_figures(value)]
    return "\n".join(lines)


def _figures(value: Any) -> list[str]:
    """Tables of every figure of ``value``: one of paths and values, and one per group of records
    of the same kind (methods by metrics, runs by measures) with a row per record."""
    rows: list[tuple[str, Any]] = []
    grids: list[str] = []

    def walk(inner: Any, path: str) -> None:
        records = _records(inner)
        if records:
            columns = list(dict.fromkeys(column for record in records.values() for column in record))
            grids.append(f"`{path or '.'}`:\n\n" + _table(
                ["", *(f"`{column}`" for column in columns)],
                ([f"`{name}`", *(_figure(record[column]) if column in record else "" for column in columns)]
                 for name, record in records.items())))
        elif isinstance(inner, dict):
            for key, item in inner.items():
                walk(item, f"{path}.{key}" if path else str(key))
        elif _is_nested(inner):
            for index, item in enumerate(inner):
                walk(item, f"{path}[{index}]")
        else:
            rows.append((path, inner))

    walk(value, "")
    table = [_table(["figure", "value"], ([_code(key), _figure(item)] for key, item in rows))] if rows else []
    return table + grids


def _records(value: Any) -> dict[str, dict[str, Any]]:
    """``value`` as named records of plain figures, when it is two or more of them ({} otherwise)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    records = {f"[{name}]" if isinstance(name, int) else str(name): record for name, record in items}
    if len(records) < 2 or not all(isinstance(record, dict) and record and
                                   not any(_is_nested(item) for item in record.values())
                                   for record in records.values()):
        return {}
    return records


def _is_nested(value: Any) -> bool:
    """A dict, or a list a table row cannot show in one cell (records, or a long list)."""
    return isinstance(value, dict) or (isinstance(value, list) and (
        any(isinstance(item, dict | list) for item in value) or len(json.dumps(value)) > 80))


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every figure of a results file as (dotted path, value); a short list of plain values is one."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, f"{path}.{key}" if path else str(key))
    elif _is_nested(value):
        for index, inner in enumerate(value):
            yield from _leaves(inner, f"{path}[{index}]")
    else:
        yield path, value


def _is_machine(key: str) -> bool:
    last = key.rpartition(".")[2]
    return key.partition(".")[0] == "machine" or last in ("device", "cores", "cpus", "torch")


def _dates(data: Any) -> list[str]:
    return sorted(set(re.findall(r"\b20\d\d-[01]\d-[0-3]\d\b", json.dumps(data))))


def _figure(value: Any) -> str:
    """A number as it stands; text, lists, true/false/null as code."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return _code(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


# -- deviations -------------------------------------------------------------------------------------


def deviations_page() -> str:
    data = json.loads((DOCS / "deviations.json").read_text(encoding="utf-8"))
    variants = data["variants"]
    ours = variants.get("ours", {})
    names = list(variants)

    def change(variant: dict, key: str) -> str:
        difference = variant[key] - ours.get(key, variant[key])
        return f"{variant[key]:,}" + (f" ({difference:+,})" if difference else "")

    summary = _table(
        ["variant", "switched back", "overrides", "papers", "paragraphs", "sentences", "cite-worthy"],
        ([f"`{name}`", _text(variant["switch"]),
          ", ".join(_code(f"{key}: {json.dumps(value)}") for key, value in variant["overrides"].items()),
          *(change(variant, key) for key in ("papers_kept", "paragraphs_kept", "sentences", "cite_worthy"))]
         for name, variant in variants.items()))
    fields = sorted({field for variant in variants.values() for field in variant["per_field"]})
    per_field = _table(["field", *(f"`{name}`" for name in names)],
                       ([field, *(_papers_paragraphs(variants[name]["per_field"].get(field))
                                  for name in names)] for field in fields))
    reasons = sorted({reason for variant in variants.values() for reason in variant["paragraphs_rejected"]})
    rejected = _table(["reason", *(f"`{name}`" for name in names)],
                      ([f"`{reason}`", *(f"{variants[name]['paragraphs_rejected'].get(reason, 0):,}"
                                         for name in names)] for reason in reasons))
    return "\n".join([
        _generated_from("`docs/deviations.json` (written by `python scripts/deviations.py`)"),
        "# Deviation figures\n",
        f"What each switchable deviation from the paper's public code does to the demo corpus "
        f"(`{data['release']}`): the demo curated once with today's rules (`ours`) and once per "
        "variant that switches one rule back. [Deviations from the paper](../researchers/deviations.md) "
        "says why each deviation is made.\n",
        "## Kept\n", "Differences from `ours` in brackets.\n", summary,
        "## Per field\n", "Papers / paragraphs kept per field.\n", per_field,
        "## Paragraphs rejected, by reason\n", rejected,
    ])


def _papers_paragraphs(counts: dict[str, int] | None) -> str:
    return f"{counts['papers']} / {counts['paragraphs']}" if counts else "–"


# -- the nav and the command ------------------------------------------------------------------------


def with_benchmark_nav(mkdocs_yml: str) -> str:
    """mkdocs.yml with one nav entry per benchmark results page between the two marker comments."""
    lines = mkdocs_yml.splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if line.strip() == NAV_BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == NAV_END)
    indent = lines[begin][:len(lines[begin]) - len(lines[begin].lstrip())]
    entries = [f"{indent}- {path.stem}: reference/benchmarks/{path.stem}.md\n" for path in results_files()]
    return "".join([*lines[:begin + 1], *entries, *lines[end:]])


# -- files of the project's root ---------------------------------------------------------------------

ROOT_FILES = {"changelog.md": ("CHANGELOG.md", None), "license.md": ("LICENSE", "text"),
              "citing.md": ("CITATION.cff", "yaml")}


def root_files_pages() -> dict[str, str]:
    """The site's copies of the root's CHANGELOG.md, LICENSE and CITATION.cff (the site is built
    from docs/ only)."""
    pages = {}
    for page, (name, fence) in ROOT_FILES.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        if fence:
            intro = {"license.md": "# Licence\n\nThe project's `LICENSE`:\n",
                     "citing.md": "# Citing citeworth\n\nThe project's `CITATION.cff` (GitHub's \"Cite this "
                     "repository\" reads it; `cffconvert` turns it into BibTeX). Cite the CiteWorth paper "
                     "too (Wright & Augenstein, Findings of ACL 2021), whose rules and models this "
                     "reproduces:\n"}[page]
            text = f"{intro}\n```{fence}\n{text.rstrip()}\n```\n"
        pages[page] = _generated_from(f"`{name}`") + text.replace("](docs/", "](")
    return pages


def stale(files: dict[Path, str]) -> list[Path]:
    """The generated files whose text on disk differs (or that are missing)."""
    return [path for path, text in files.items()
            if not (ROOT / path).exists() or (ROOT / path).read_text(encoding="utf-8") != text]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citeworth.docs.reference",
                                     description="Generate the documentation site's reference pages.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="rewrite the generated files that differ")
    action.add_argument("--check", action="store_true", help="exit 1 when a generated file differs")
    args = parser.parse_args(None if argv is None else list(argv))
    files = generated()
    outdated = stale(files)
    if args.write:
        for path in outdated:
            write_text(ROOT / path, files[path])
            print(f"wrote {path}")
    elif args.check and outdated:
        print(f"stale: {', '.join(map(str, outdated))}; run {REGENERATE}", file=sys.stderr)
        return 1
    elif not (args.write or args.check):
        print(*sorted(map(str, files)), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
