"""User macro definitions (``\\newcommand``, ``\\def``, ``\\let``...) read off the flattened source.

The parser registers every definition's argument count with pylatexenc (so ``\\mycite{key}`` keeps
its argument) and expands a macro in place when its body is plain LaTeX: a citation alias such as
SciPy's ``\\newcommand{\\inlinecite}[1]{\\footnotesize\\citen{#1}}`` then yields a ``\\citen`` at the
alias's position, and a text macro (``\\newcommand{\\ours}{\\textsc{SciFact}\\xspace}``) its words.
A body that programs TeX (conditionals, ``\\csname``, ``\\expandafter``, internal ``@`` macros, a
definition inside a definition, recursion) is not expanded: only its last argument's text is kept.
A body that is just ``\\begin{env}`` or ``\\end{env}`` (LaTeX 2.09 papers' ``\\def\\be{\\begin{equation}}``)
makes the macro a shorthand the parser reads as that delimiter (``delimits``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from citeworth.sources.latex.project import strip_comments

_NEWCOMMAND = re.compile(
    r"\\(?P<kind>newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*"
    r"(?:\{\s*\\(?P<braced>[a-zA-Z@]+|.)\s*\}|\\(?P<bare>[a-zA-Z@]+|.))"
)
_DEF = re.compile(r"\\[gex]?def\s*\\(?P<name>[a-zA-Z@]+)(?P<params>[^{]*)\{")
_LET = re.compile(r"\\let\s*\\(?P<name>[a-zA-Z@]+)\s*=?\s*\\(?P<target>[a-zA-Z@]+)")
_PARAM = re.compile(r"#(\d)")
_UNEXPANDABLE = re.compile(
    r"\\(if[a-zA-Z]*|else|fi|csname|endcsname|expandafter|noexpand|[gex]?def|let|futurelet|"
    r"newcommand|renewcommand|the|number|afterassignment|aftergroup|[a-zA-Z]*@[a-zA-Z@]*)"
    r"(?![a-zA-Z])"
)
_NEWENVIRONMENT = re.compile(r"\\(?:re)?newenvironment\*?\s*\{[^{}]*\}")
_ALIAS_BODY = re.compile(r"\s*\\([a-zA-Z]+)\s*")
_DELIMITER_BODY = re.compile(r"\s*\\(begin|end)\s*\{([^{}]+)\}\s*")
MAX_ARGS = 9


@dataclass(frozen=True, slots=True)
class MacroDef:
    name: str
    nargs: int
    default: str | None  # the optional first argument's default (``\newcommand{\x}[2][d]{...}``)
    body: str
    expandable: bool
    alias_of: str | None = None  # ``\let\x\cite`` or a body that is just ``\cite``: \x is \cite
    delimits: tuple[str, str] | None = None  # ("begin" or "end", environment) of a shorthand


class Sites(NamedTuple):
    """Where a source defines its macros: ``bodies``, the extent of every definition's body (braces
    excluded: ``\\newcommand``'s and ``\\def``'s, ``\\newenvironment``'s begin and end code), and
    ``names``, the offset of every defined name's backslash (``\\bthm`` in ``\\newcommand{\\bthm}``)."""

    bodies: list[tuple[int, int]]
    names: frozenset[int]


def collect_definitions(text: str) -> dict[str, MacroDef]:
    """Every macro the source defines, by name (a later ``\\renewcommand``/``\\def`` wins, a
    ``\\providecommand`` never overrides)."""
    definitions: dict[str, MacroDef] = {}
    for found in sorted(_found(strip_comments(text)), key=lambda found: found.start):
        if not (found.provide and found.definition.name in definitions):
            definitions[found.definition.name] = found.definition
    return definitions


def definition_sites(text: str) -> Sites:
    """The ``Sites`` of the source's definitions. A body is read where its macro is used, never
    where it is defined; pylatexenc, reading bodies that open an environment they do not close
    (``\\newenvironment{thm}{\\begin{theorem}}{\\end{theorem}}``), or a shorthand's name as the
    delimiter it stands for (``\\newcommand{\\bthm}{\\begin{theorem}}``), took time exponential
    in their number."""
    scan = strip_comments(text)
    found = list(_found(scan))
    bodies = [f.body for f in found if f.body]
    for match in _NEWENVIRONMENT.finditer(scan):
        options = _options(scan, match.end())
        if options is None:
            continue
        position = options[2]
        for _ in ("begin", "end"):
            group = _group(scan, position)
            if group is None:
                break
            bodies.append((position + 1, group[1] - 1))
            position = _skip_space(scan, group[1])
    return Sites(sorted(bodies), frozenset(f.name_at for f in found))


class _Found(NamedTuple):
    start: int
    definition: MacroDef
    provide: bool  # a \providecommand: never overrides
    name_at: int  # the offset of the name's backslash
    body: tuple[int, int] | None  # its extent, braces excluded (a \let has none)


def _found(scan: str) -> Iterator[_Found]:
    """Each ``\\newcommand``-like, ``\\def`` and ``\\let`` in ``scan`` (comments blanked)."""
    for match in _NEWCOMMAND.finditer(scan):
        name = match.group("braced") or match.group("bare")
        options = _options(scan, match.end())
        body = _group(scan, options[2]) if options else None
        if body is not None:
            nargs, default, position = options
            provide = match.group("kind") == "providecommand"
            name_at = match.start("braced" if match.group("braced") else "bare") - 1
            definition = _definition(name, nargs, default, body[0])
            yield _Found(match.start(), definition, provide, name_at, (position + 1, body[1] - 1))
    for match in _DEF.finditer(scan):
        body = _group(scan, match.end() - 1)
        if body is not None:
            params = match.group("params")
            nargs = len(_PARAM.findall(params))
            delimited = bool(_PARAM.sub("", params).strip())
            definition = _definition(match.group("name"), nargs, None, body[0])
            if delimited:
                definition = MacroDef(definition.name, nargs, None, body[0], False)
            extent = (match.end(), body[1] - 1)
            yield _Found(match.start(), definition, False, match.start("name") - 1, extent)
    for match in _LET.finditer(scan):
        definition = MacroDef(match.group("name"), 0, None, "", False, match.group("target"))
        yield _Found(match.start(), definition, False, match.start("name") - 1, None)


def argspec(definition: MacroDef) -> str:
    """The pylatexenc argument spec: ``[`` for an optional first argument, ``{`` for each other."""
    if definition.nargs == 0:
        return ""
    return ("[" if definition.default is not None else "{") + "{" * (definition.nargs - 1)


def substitute(definition: MacroDef, args: list[str | None]) -> str:
    """The body with ``#1``..``#9`` replaced by the arguments' source text (a missing optional
    argument by its default, a missing mandatory one by nothing); ``##`` stays ``#``."""
    values = [
        definition.default
        if value is None and index == 0 and definition.default is not None
        else (value or "")
        for index, value in enumerate(args)
    ]
    return re.sub(
        r"##|#(\d)",
        lambda m: (
            "#"
            if m.group(0) == "##"
            else (values[int(m.group(1)) - 1] if int(m.group(1)) <= len(values) else "")
        ),
        definition.body,
    )


def _definition(name: str, nargs: int, default: str | None, body: str) -> MacroDef:
    nargs = min(nargs, MAX_ARGS)
    alias = _ALIAS_BODY.fullmatch(body)
    if alias and nargs == 0:
        return MacroDef(name, 0, None, body, False, alias.group(1))
    recursive = re.search(rf"\\{re.escape(name)}(?![a-zA-Z])", body) is not None
    delimiter = _DELIMITER_BODY.fullmatch(body) if nargs == 0 else None
    return MacroDef(
        name,
        nargs,
        default,
        body,
        not (recursive or _UNEXPANDABLE.search(body)),
        delimits=(delimiter.group(1), delimiter.group(2).strip()) if delimiter else None,
    )


def _options(text: str, position: int) -> tuple[int, str | None, int] | None:
    """``[n]`` and ``[default]`` after a definition's name (0 and None when absent), and where its
    body group starts; None when an option is malformed."""
    nargs, default = 0, None
    position = _skip_space(text, position)
    if text.startswith("[", position):
        close = text.find("]", position)
        if close == -1 or not text[position + 1 : close].strip().isdigit():
            return None
        nargs = int(text[position + 1 : close])
        position = _skip_space(text, close + 1)
        if text.startswith("[", position):
            bracket = _bracket(text, position)
            if bracket is None:
                return None
            default, position = bracket
            position = _skip_space(text, position)
    return nargs, default, position


def _group(text: str, position: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``position`` and the offset after it."""
    if not text.startswith("{", position):
        return None
    depth = 0
    index = position
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[position + 1 : index], index + 1
        index += 1
    return None


def _bracket(text: str, position: int) -> tuple[str, int] | None:
    depth = 0
    for index in range(position + 1, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "]" and depth == 0:
            return text[position + 1 : index], index + 1
    return None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\n":
        position += 1
    return position
