"""The LaTeX parser: a flattened source -> running-text paragraphs, citations and regions.

pylatexenc parses the masked, flattened source (see project.py) with tolerant parsing, so
unbalanced braces and unknown macros cost a few characters, never the document. This module walks
its node tree:

- **Text**: sections (``\\section``... the top-level title is each paragraph's ``section``),
  paragraphs at blank lines, ``\\par`` and list items; accents, ``~``, ``--``, quotes and symbol
  macros become Unicode; formatting macros keep their text; ``\\ref`` and friends read ``REF``
  (as unarXive writes them); an unknown macro keeps the text of its braces.
- **Skipped** (recorded as ``Region``s): preamble, comments, maths (a ``{{formula:ID}}``
  placeholder in the text, ID a hash of its LaTeX and ordinal), floats and tables, captions,
  footnotes, verbatim, the bibliography, ``\\iffalse`` blocks.
- **Citations**: natbib and biblatex commands (``CITE_COMMANDS``; starred, optional arguments,
  several keys, biblatex's multi-cite ``\\cites{a}{b}``) and user macros that wrap them. In the
  text a command becomes one ``{{cite:KEY}}`` per key, joined by ", " (unarXive's form); every
  command, also one in a skipped region, is a ``Citation`` with its keys and source extent.

Which macro or environment is of which kind (cite, section, maths, float, dropped, symbol...) is
the vocabulary in vocabulary.py; this module is the walk.

Every character of a paragraph's text maps back to the flattened source (``flat_offset``) and so
to ``file:line:column`` (``TexDocument.position``).
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import time
from dataclasses import dataclass, field

from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import LatexNodes2Text

from citeworth.sources.base import RecordError
from citeworth.sources.latex.macros import (
    MacroDef,
    argspec,
    collect_definitions,
    definition_sites,
    substitute,
)
from citeworth.sources.latex.project import (
    BEGIN_DOCUMENT,
    FlatSource,
    Region,
    SourcePosition,
    blank,
    comment_regions,
    strip_comments,
)
from citeworth.sources.latex.vocabulary import (
    ABSTRACT_ENVS,
    ACCENTS,
    ACKNOWLEDGEMENT_ENVS,
    CITE_COMMANDS,
    DEF_MACROS,
    DROPPED_MACROS,
    FLOAT_ENVS,
    LIST_ENVS,
    MATH_ENVS,
    MULTI_CITES,
    REF_MACROS,
    SECTION_LEVELS,
    SKIPPED_REGION_MACROS,
    SPECIALS,
    STRUCTURE_SPECS,
    SYMBOLS,
)

MAX_NUMBERED_LEVEL = 3  # LaTeX numbers down to \subsubsection by default
_PREAMBLE_PARTS = re.compile(r"\\title(?![a-zA-Z@])|\\begin\s*\{[Aa]bstract\}|\\abstract(?![a-zA-Z@])")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_WORD = re.compile(r"\S+")
_LATEX_LEFTOVERS = re.compile(r"[\\{}]")
MAX_EXPANSION_DEPTH = 10
# A user macro is expanded by parsing its body with the arguments put in; an argument longer than
# this is text an unclosed brace swallowed (or a whole section): its text is read, unexpanded.
MAX_EXPANDED_ARGUMENT = 2_000
EXPANSION_ALLOWANCE = 100_000  # characters of expanded bodies parsed per paper, beyond its length
_TICK = 256  # steps (tokens read, nodes walked) between deadline checks
_TEXT = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation command as written: ``command`` is the name used in the source (a user alias
    such as ``inlinecite``), ``cite_command`` the natbib/biblatex command it stands for."""

    command: str
    cite_command: str
    keys: tuple[str, ...]
    start: int  # extent in the flattened source
    end: int
    in_text: bool  # False inside a caption, footnote, float, heading...


@dataclass(frozen=True, slots=True)
class CiteMark:
    """A ``{{cite:KEY}}`` placeholder in a paragraph's text."""

    start: int
    end: int
    key: str
    citation: int  # index into TexDocument.citations


@dataclass(frozen=True, slots=True)
class Formula:
    start: int  # the ``{{formula:ID}}`` placeholder in the paragraph's text
    end: int
    formula_id: str
    latex: str


@dataclass(frozen=True)
class TexParagraph:
    """A paragraph of running text. ``text`` holds placeholders for citations and formulas."""

    text: str
    section: str  # the top-level section's title ("" before the first)
    heading: str  # the nearest heading (a subsection's title, say)
    sec_number: str | None
    cites: tuple[CiteMark, ...]
    formulas: tuple[Formula, ...]
    anchors: tuple[tuple[int, int, bool], ...]  # (text offset, flat offset, copied verbatim) per word

    def flat_offset(self, offset: int) -> int:
        """The flattened-source offset of the text's character ``offset`` (text from a macro
        expansion or a placeholder maps to the start of what produced it)."""
        index = bisect.bisect_right(self.anchors, (offset, float("inf"), True)) - 1
        if index < 0:
            return self.anchors[0][1] if self.anchors else 0
        text_offset, flat, exact = self.anchors[index]
        return flat + (offset - text_offset) if exact else flat


@dataclass
class TexDocument:
    """What the parser reads from one LaTeX project (the check command's input too)."""

    source: FlatSource
    title: str | None = None
    abstract: list[TexParagraph] = field(default_factory=list)
    paragraphs: list[TexParagraph] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    inline_bibliography: str | None = None  # the thebibliography environment's source
    definitions: dict[str, MacroDef] = field(default_factory=dict)

    def position(self, flat_offset: int) -> SourcePosition:
        """``file:line:column`` of a flattened-source offset."""
        return self.source.source_map.position(flat_offset)

    def paragraph_position(self, paragraph: TexParagraph, offset: int) -> SourcePosition:
        """``file:line:column`` of a character of ``paragraph.text``."""
        return self.position(paragraph.flat_offset(offset))

    def region_at(self, flat_offset: int) -> Region | None:
        return next((r for r in self.regions if r.start <= flat_offset < r.end), None)

    @property
    def cited_keys(self) -> list[str]:
        return list(dict.fromkeys(key for citation in self.citations for key in citation.keys))


class Deadline:
    """A paper's time limit, started at creation. ``step()`` is called at every token pylatexenc
    reads and every node the walk visits, so the limit holds inside pylatexenc's parse too (a
    pathological source costs the limit, not minutes); ``steps`` counts the parse's work."""

    def __init__(self, seconds: float = math.inf):
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps % _TICK == 0 and time.monotonic() > self.at:
            raise RecordError("latex_timeout", f"not read within the time limit of {self.seconds:g} s")


def parse(source: FlatSource, deadline: Deadline | None = None, fragment: bool = False) -> TexDocument:
    """Parse a flattened project; RecordError ``latex_timeout`` past ``deadline``. ``fragment``: a
    source without ``\\begin{document}`` (a chapter another file ``\\input``s) is read whole as
    the document body instead of failing with ``no_document_body``."""
    definitions = collect_definitions(source.parse_text)
    walker = _Walker(source, definitions, deadline or Deadline())
    return walker.document(fragment)


class _LatexWalker(latexwalker.LatexWalker):
    """pylatexenc's walker with two additions at every token it reads: the deadline's step, and
    environment shorthands (``\\be`` for ``\\begin{equation}``: ``shorthands``, name -> the
    delimiter) read as the delimiter they stand for -- but not where a definition names them
    (``defined_at``: offsets of the names' backslashes)."""

    def __init__(self, text: str, context, deadline: Deadline, shorthands: dict[str, tuple[str, str]],
                 defined_at: frozenset[int] = frozenset()):
        super().__init__(text, latex_context=context, tolerant_parsing=True)
        self.deadline = deadline
        self.shorthands = shorthands
        self.defined_at = defined_at

    def get_token(self, pos, include_brace_chars=None, environments=True, keep_inline_math=None,
                  parsing_state=None, **kwargs):
        self.deadline.step()
        token = super().get_token(pos, include_brace_chars, environments, keep_inline_math, parsing_state,
                                  **kwargs)
        shorthand = self.shorthands.get(token.arg) if token.tok == "macro" and environments else None
        if shorthand is None or token.pos in self.defined_at:
            return token
        kind, environment = shorthand
        return latexwalker.LatexToken(tok=f"{kind}_environment", arg=environment, pos=token.pos,
                                      len=token.len - len(token.post_space), pre_space=token.pre_space)


class _Builder:
    """A paragraph's text in the making: whitespace collapsed, an anchor per word."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.pending_space = False
        self.anchors: list[tuple[int, int, bool]] = []
        self.cites: list[CiteMark] = []
        self.formulas: list[Formula] = []

    def space(self) -> None:
        self.pending_space = self.length > 0

    def add(self, text: str, flat: int, exact: bool) -> None:
        for match in _WORD.finditer(text):
            if match.start() > 0:
                self.space()
            word = _LATEX_LEFTOVERS.sub("", match.group()) if not exact else match.group()
            if word:
                self._write_word(word, flat + match.start() if exact else flat, exact)
        if text and text[-1].isspace():
            self.space()

    def token(self, text: str, flat: int) -> tuple[int, int]:
        """An indivisible piece (a placeholder); its [start, end) in the text."""
        self._write_word(text, flat, False)
        return self.length - len(text), self.length

    def glue(self, text: str, flat: int) -> None:
        """Text written right after the previous piece, whatever whitespace is pending."""
        self.pending_space = False
        self._write_word(text, flat, False)

    def _write_word(self, word: str, flat: int, exact: bool) -> None:
        if self.pending_space:
            self.parts.append(" ")
            self.length += 1
            self.pending_space = False
        self.anchors.append((self.length, flat, exact))
        self.parts.append(word)
        self.length += len(word)

    @property
    def text(self) -> str:
        return "".join(self.parts)


class _Walker:
    def __init__(self, source: FlatSource, definitions: dict[str, MacroDef], deadline: Deadline):
        self.source = source
        self.definitions = definitions
        self.deadline = deadline
        self.context = _context(definitions)
        self.doc = TexDocument(source, definitions=definitions)
        self.out = _Builder()
        self.out_paragraphs = self.doc.paragraphs
        self.in_text = True
        self.depth = 0
        self.invocation: tuple[str, int, int] | None = None  # outermost user macro being expanded
        self.formula_count = 0
        self.section = ""
        self.heading = ""
        self.numbers: list[int] = []
        self.appendix = False
        self.top_level = 0 if re.search(r"\\chapter\b", source.parse_text) else 1
        self.masked_starts = [region.start for region in source.masked]
        self.parsed: dict[str, list] = {}
        self.expansion_left = len(source.parse_text) + EXPANSION_ALLOWANCE
        self.shorthands = {name: d.delimits for name, d in definitions.items() if d.delimits}

    # -- the document ------------------------------------------------------------------------

    def document(self, fragment: bool = False) -> TexDocument:
        """Parse the body; of the preamble only the title and an abstract (parsing the preamble's
        definitions would cost time for nothing: they are read by ``collect_definitions``). The
        bodies of definitions anywhere are blanked for pylatexenc: each is parsed where its macro
        is used (``_user_macro``), never where it is defined (see ``definition_sites``)."""
        sites = definition_sites(self.source.parse_text)
        bodies = [Region("definition", start, end) for start, end in sites.bodies]
        text = blank(self.source.parse_text, bodies)
        begin = BEGIN_DOCUMENT.search(strip_comments(text))
        walker = _LatexWalker(text, self.context, self.deadline, self.shorthands, sites.names)
        if fragment and begin is None:
            self.walk(self._read_nodes(walker, 0, None), None)
            return self._finish()
        body = self._read_node(walker, begin.start()) if begin else None
        if not _is_env(body, "document"):
            raise RecordError(
                "no_document_body", f"{self.source.main}: no \\begin{{document}}...\\end{{document}}"
            )
        self.doc.regions.append(Region("preamble", 0, body.pos))
        for match in _PREAMBLE_PARTS.finditer(strip_comments(text[: body.pos])):
            self._preamble(self._read_node(walker, match.start()))
        self.walk(body.nodelist, None)
        return self._finish()

    def _finish(self) -> TexDocument:
        self._end_paragraph()
        self.doc.regions += comment_regions(self.source.text) + self.source.masked
        self.doc.regions.sort(key=lambda r: (r.start, r.end))
        return self.doc

    def _read_node(self, walker, position: int):
        """The one node (macro with its arguments, environment) that starts at ``position``."""
        nodes = self._read_nodes(walker, position, 1)
        return nodes[0] if nodes else None

    def _read_nodes(self, walker, position: int, limit: int | None) -> list:
        try:
            return walker.get_latex_nodes(pos=position, read_max_nodes=limit)[0]
        except (latexwalker.LatexWalkerError, RecursionError) as exc:
            raise RecordError("latex_parse_error", f"{self.source.main}: {str(exc)[:300]}") from None

    def _preamble(self, node) -> None:
        """The title, or an abstract written before ``\\begin{document}``."""
        if _is_macro(node, "title"):
            self.doc.title = self._plain_text(_last_arg_nodes(node))
        elif isinstance(node, latexwalker.LatexEnvironmentNode) and node.environmentname in ABSTRACT_ENVS:
            self._abstract(node.nodelist)
        elif _is_macro(node, "abstract") and _last_arg_nodes(node):
            self._abstract(_last_arg_nodes(node))

    # -- walking -----------------------------------------------------------------------------

    def walk(self, nodes: list, origin: int | None) -> None:
        index = 0
        while index < len(nodes):
            node = nodes[index]
            index += 1
            self.deadline.step()
            if isinstance(node, latexwalker.LatexMacroNode) and node.macroname in DEF_MACROS:
                while index < len(nodes) and not isinstance(nodes[index], latexwalker.LatexGroupNode):
                    index += 1
                index += 1
                continue
            if isinstance(node, latexwalker.LatexMacroNode) and node.macroname == "let":
                index = _after_let(nodes, index)
                continue
            if (
                isinstance(node, latexwalker.LatexMacroNode)
                and self._cite_name(node.macroname) in MULTI_CITES
            ):
                extra = []
                while index < len(nodes) and isinstance(nodes[index], latexwalker.LatexGroupNode):
                    extra.append(nodes[index])
                    index += 1
                self._citation(node, origin, extra)
                continue
            self.node(node, origin)

    def node(self, node, origin: int | None) -> None:
        flat = node.pos if origin is None else origin
        if isinstance(node, latexwalker.LatexCharsNode):
            self._chars(node.chars, flat, origin is None)
        elif isinstance(node, latexwalker.LatexGroupNode):
            self.walk(node.nodelist, origin)
        elif isinstance(node, latexwalker.LatexCommentNode):
            pass  # comment regions come from the source (comment_regions)
        elif isinstance(node, latexwalker.LatexMathNode):
            self._maths(node, origin)
        elif isinstance(node, latexwalker.LatexSpecialsNode):
            text = SPECIALS.get(node.specials_chars)
            self.out.add(text if text is not None else node_text(node), flat, False)
        elif isinstance(node, latexwalker.LatexEnvironmentNode):
            self._environment(node, origin)
        elif isinstance(node, latexwalker.LatexMacroNode):
            self._macro(node, origin)

    def _chars(self, chars: str, flat: int, exact: bool) -> None:
        position = 0
        for match in _PARAGRAPH_BREAK.finditer(chars):
            if not exact or self._masked(flat + match.start()):
                continue
            self.out.add(chars[position : match.start()], flat + position, exact)
            self._end_paragraph()
            position = match.end()
        self.out.add(chars[position:], flat + position, exact)

    def _macro(self, node, origin: int | None) -> None:
        name = node.macroname
        flat = node.pos if origin is None else origin
        definition = self.definitions.get(name)
        if self._cite_name(name) in CITE_COMMANDS:
            self._citation(node, origin, [])
        elif name in SECTION_LEVELS:
            self._heading(node, SECTION_LEVELS[name], flat, origin)
        elif definition is not None and definition.alias_of is None and name not in SYMBOLS:
            self._user_macro(node, definition, origin)
        elif name in REF_MACROS:
            self.out.add("REF", flat, False)
            self._post_space(node)
        elif name in SKIPPED_REGION_MACROS:
            self._skip(node, SKIPPED_REGION_MACROS[name], origin)
        elif name == "item":
            self._end_paragraph()
            self.walk(_arg_nodes(node), origin)
        elif name in ("par", "\\"):
            if name == "par" and origin is None:
                self._end_paragraph()
            else:
                self.out.space()
        elif name == "appendix":
            self.appendix, self.numbers = True, []
        elif name == "abstract" and _last_arg_nodes(node):
            self._abstract(_last_arg_nodes(node))
        elif name == "title":
            self.doc.title = self.doc.title or self._plain_text(_last_arg_nodes(node))
        elif name == "href":
            self.walk(_last_arg_nodes(node), origin)
        elif name == "url" and node.nodeargd and node.nodeargd.argnlist:
            self.out.add(_inner_source(node.nodeargd.argnlist[-1]) or "", flat, False)
            self._post_space(node)
        elif name in DROPPED_MACROS:
            self._post_space(node)
        elif name in SYMBOLS:
            self.out.add(SYMBOLS[name], flat, False)
            self._post_space(node)
        elif (args := _last_arg_nodes(node)) and name not in ACCENTS:
            self.walk(args, origin)
        else:
            self.out.add(node_text(node), flat, False)
            self._post_space(node)

    def _post_space(self, node) -> None:
        if getattr(node, "macro_post_space", ""):
            self.out.space()

    def _cite_name(self, name: str) -> str:
        """The cite command ``name`` stands for (through ``\\let``/alias bodies), or ``name``."""
        return _alias_target(self.definitions, name)

    # -- citations ---------------------------------------------------------------------------

    def _citation(self, node, origin: int | None, extra_groups: list) -> None:
        command = self._cite_name(node.macroname)
        keys = _cite_keys(node, extra_groups)
        if self.invocation is not None:
            written, start, end = self.invocation
        else:
            written, start = node.macroname, node.pos
            end = (extra_groups[-1].pos + extra_groups[-1].len) if extra_groups else node.pos + node.len
        index = len(self.doc.citations)
        self.doc.citations.append(Citation(written, command, keys, start, end, self.in_text))
        if not self.in_text or not keys:
            return
        flat = start
        for number, key in enumerate(keys):
            if number:
                self.out.glue(",", flat)
                self.out.space()
            token_start, token_end = self.out.token(f"{{{{cite:{key}}}}}", flat)
            self.out.cites.append(CiteMark(token_start, token_end, key, index))
        self._post_space(node)

    # -- structure ---------------------------------------------------------------------------

    def _heading(self, node, level: int, flat: int, origin: int | None) -> None:
        self._end_paragraph()
        title = self._plain_text(_last_arg_nodes(node))
        starred = bool(node.nodeargd and node.nodeargd.argnlist and node.nodeargd.argnlist[0] is not None)
        if level <= self.top_level:
            self.section = title
        self.heading = title
        relative = level - self.top_level
        if relative >= 0 and not starred and level <= MAX_NUMBERED_LEVEL:
            del self.numbers[relative + 1 :]
            while len(self.numbers) <= relative:
                self.numbers.append(0)
            self.numbers[relative] += 1
        self.doc.regions.append(Region("heading", flat, flat + node.len if origin is None else flat))

    def _number(self) -> str | None:
        if not self.numbers or self.numbers[0] == 0:
            return None
        first = (
            chr(ord("A") + self.numbers[0] - 1)
            if self.appendix and self.numbers[0] <= 26
            else str(self.numbers[0])
        )
        return ".".join([first, *map(str, self.numbers[1:])])

    def _end_paragraph(self) -> None:
        out = self.out
        if out.length:
            self.out_paragraphs.append(
                TexParagraph(
                    out.text,
                    self.section,
                    self.heading,
                    self._number(),
                    tuple(out.cites),
                    tuple(out.formulas),
                    tuple(out.anchors),
                )
            )
        self.out = _Builder()

    def _environment(self, node, origin: int | None) -> None:
        name = node.environmentname
        flat = node.pos if origin is None else origin
        if name in MATH_ENVS:
            self._maths(node, origin)
        elif name == "thebibliography":
            self.doc.inline_bibliography = node.latex_verbatim()
            self._skip(node, "bibliography", origin)
        elif name in FLOAT_ENVS:
            self._skip(node, "float", origin)
        elif name in ABSTRACT_ENVS:
            self._abstract(node.nodelist)
            self.doc.regions.append(Region("abstract", flat, flat + node.len))
        elif name in LIST_ENVS:
            self._end_paragraph()
            self.walk(node.nodelist, origin)
            self._end_paragraph()
        elif name in ACKNOWLEDGEMENT_ENVS:
            self._end_paragraph()
            section, heading = self.section, self.heading
            self.section = self.heading = "Acknowledgments"
            self.walk(node.nodelist, origin)
            self._end_paragraph()
            self.section, self.heading = section, heading
        else:
            self.walk(node.nodelist, origin)

    def _abstract(self, nodes: list) -> None:
        self._end_paragraph()
        saved = self.out_paragraphs, self.section, self.heading, self.numbers
        self.out_paragraphs, self.section, self.heading, self.numbers = (
            self.doc.abstract,
            "Abstract",
            "Abstract",
            [],
        )
        self.walk(nodes, None)
        self._end_paragraph()
        self.out_paragraphs, self.section, self.heading, self.numbers = saved

    def _skip(self, node, kind: str, origin: int | None) -> None:
        """Leave ``node`` out of the text; its citations are still recorded (not in the text)."""
        flat = node.pos if origin is None else origin
        self.doc.regions.append(Region(kind, flat, flat + node.len if origin is None else flat))
        saved_out, saved_in_text, saved_paragraphs = self.out, self.in_text, self.out_paragraphs
        self.out, self.in_text, self.out_paragraphs = _Builder(), False, []
        try:
            if isinstance(node, latexwalker.LatexEnvironmentNode):
                self.walk(node.nodelist, origin)
            else:
                for arg in (node.nodeargd.argnlist if node.nodeargd else []) or []:
                    if arg is not None:
                        self.walk([arg], origin)
        finally:
            self.out, self.in_text, self.out_paragraphs = saved_out, saved_in_text, saved_paragraphs

    def _plain_text(self, nodes: list) -> str:
        """Text of a title or heading: no paragraphs, citations left out."""
        saved = self.out, self.in_text, self.out_paragraphs
        self.out, self.in_text, self.out_paragraphs = _Builder(), False, []
        try:
            self.walk(nodes, None)
            return " ".join([*(p.text for p in self.out_paragraphs), self.out.text]).strip()
        finally:
            self.out, self.in_text, self.out_paragraphs = saved

    def _maths(self, node, origin: int | None) -> None:
        """Maths (``$...$``, ``\\[...\\]``, an environment): a formula, or one that never closed."""
        if origin is None and self.in_text and not self._closed(node):
            self._unclosed_formula(node)
        else:
            self._formula(node, node.pos if origin is None else origin)

    def _formula(self, node, flat: int) -> None:
        if not self.in_text:
            self.doc.regions.append(Region("math", flat, flat + node.len if flat == node.pos else flat))
            self.out.add(node_text(node), flat, False)
            return
        self._placeholder(node.latex_verbatim(), flat, flat + node.len if flat == node.pos else flat)

    def _placeholder(self, latex: str, start: int, end: int) -> None:
        """A formula's ``{{formula:ID}}`` in the text, and its region ``start``..``end``."""
        self.doc.regions.append(Region("math", start, end))
        self.formula_count += 1
        formula_id = hashlib.sha1(f"{self.formula_count}:{latex}".encode()).hexdigest()[:16]
        token_start, token_end = self.out.token(f"{{{{formula:{formula_id}}}}}", start)
        self.out.formulas.append(Formula(token_start, token_end, formula_id, latex))

    def _closed(self, node) -> bool:
        """Whether maths ends with its closing delimiter (an environment's ``\\end`` or a shorthand
        for it); maths that does not ran to the end of the source, the rest of the paper as maths."""
        end = node.pos + node.len
        tail = self.source.parse_text[max(node.pos, end - 100) : end].rstrip()
        if isinstance(node, latexwalker.LatexMathNode):
            return len(tail) > len(node.delimiters[0]) and tail.endswith(node.delimiters[1])
        closers = [rf"\\end\s*\{{{re.escape(node.environmentname)}\}}"] + [
            re.escape(f"\\{name}") for name, delimits in self.shorthands.items()
            if delimits == ("end", node.environmentname)
        ]
        return re.search(f"(?:{'|'.join(closers)})$", tail) is not None

    def _unclosed_formula(self, node) -> None:
        """As LaTeX does (a blank line ends maths, with an error), unclosed maths ends at its first
        paragraph break; what follows is read as text."""
        for index, child in enumerate(node.nodelist):
            if isinstance(child, latexwalker.LatexCharsNode) and (
                found := _PARAGRAPH_BREAK.search(child.chars)
            ):
                end = child.pos + found.start()
                self._placeholder(self.source.parse_text[node.pos : end], node.pos, end)
                self._chars(child.chars[found.start() :], end, True)
                self.walk(node.nodelist[index + 1 :], None)
                return
        self._formula(node, node.pos)

    # -- user macros -------------------------------------------------------------------------

    def _user_macro(self, node, definition: MacroDef, origin: int | None) -> None:
        args = [_inner_source(arg) for arg in (node.nodeargd.argnlist if node.nodeargd else [])]
        body = substitute(definition, args) if self._expands(definition, args) else None
        if body is None or (body not in self.parsed and len(body) > self.expansion_left):
            self.walk(_last_arg_nodes(node), origin)
            self._post_space(node)
            return
        flat = node.pos if origin is None else origin
        outer = self.invocation is None
        if outer:
            self.invocation = (node.macroname, node.pos, node.pos + node.len)
        self.depth += 1
        try:
            self.walk(self._parse(body), flat)
        finally:
            self.depth -= 1
            if outer:
                self.invocation = None
        self._post_space(node)

    # -- helpers -----------------------------------------------------------------------------

    def _expands(self, definition: MacroDef, args: list[str | None]) -> bool:
        """Whether to expand a macro: not a body that programs TeX, not past the nesting depth,
        and not with a runaway argument (each expansion re-parses its arguments: an unclosed
        brace's rest of the paper, re-parsed at every nested use, took a 22 KB paper 34 s)."""
        return (
            definition.expandable
            and self.depth < MAX_EXPANSION_DEPTH
            and all(len(arg or "") <= MAX_EXPANDED_ARGUMENT for arg in args)
        )

    def _parse(self, text: str) -> list:
        """A macro body's nodes (parsed once per distinct text, within the expansion allowance)."""
        if text not in self.parsed:
            self.expansion_left -= len(text)
            walker = _LatexWalker(text, self.context, self.deadline, self.shorthands)
            try:
                self.parsed[text] = walker.get_latex_nodes()[0]
            except (latexwalker.LatexWalkerError, RecursionError) as exc:
                raise RecordError("latex_parse_error", f"{self.source.main}: {str(exc)[:300]}") from None
        return self.parsed[text]

    def _masked(self, flat: int) -> bool:
        index = bisect.bisect_right(self.masked_starts, flat) - 1
        return index >= 0 and flat < self.source.masked[index].end


def _context(definitions: dict[str, MacroDef]):
    """pylatexenc's default macros plus the cite commands, verbatim-free floats and user macros."""
    db = latexwalker.get_default_latex_context_db()
    cite_specs = [macrospec.MacroSpec(name, "*[[{") for name in CITE_COMMANDS if name not in MULTI_CITES]
    cite_specs += [macrospec.MacroSpec(name, "[[{") for name in MULTI_CITES]
    dropped = [
        macrospec.MacroSpec(name, spec) for name, spec in {**DROPPED_MACROS, **STRUCTURE_SPECS}.items()
    ]
    user = [
        macrospec.MacroSpec(name, argspec(d))
        for name, d in definitions.items()
        if d.alias_of is None and name not in CITE_COMMANDS and name not in SECTION_LEVELS
    ]
    aliases = [
        macrospec.MacroSpec(name, "*[[{")
        for name, d in definitions.items()
        if d.alias_of is not None and _alias_target(definitions, name) in CITE_COMMANDS
    ]
    environments = [macrospec.EnvironmentSpec(name, "[[[{") for name in ("minipage",)]
    environments += [
        macrospec.EnvironmentSpec(name, "[{")
        for name in ("wrapfigure", "wraptable", "subfigure", "multicols", "adjustbox")
    ]
    db.add_context_category(
        "citeworth", macros=dropped + cite_specs + user + aliases, environments=environments, prepend=True
    )
    fast_specials(db)
    return db


def _after_let(nodes: list, index: int) -> int:
    """The index after ``\\let``'s two control sequences (and an ``=`` between them)."""
    taken = 0
    while index < len(nodes) and taken < 2:
        node = nodes[index]
        if isinstance(node, latexwalker.LatexMacroNode):
            taken += 1
        elif not (isinstance(node, latexwalker.LatexCharsNode) and node.chars.strip() in ("", "=")):
            break
        index += 1
    return index


def node_text(node) -> str:
    """pylatexenc's Unicode rendering of a symbol, accent or special; "" where it trips over a
    malformed macro (its converters index arguments that tolerant parsing left out)."""
    try:
        return _TEXT.node_to_text(node)
    except (IndexError, KeyError, AttributeError, TypeError, latexwalker.LatexWalkerError):
        return ""


def fast_specials(db) -> None:
    """Replace ``db``'s specials test -- called at every character pylatexenc reads, and the parser's
    hot spot (it loops over every category) -- by one regular expression, longest match first,
    the first category's spec winning as in pylatexenc."""
    specials: dict[str, object] = {}
    for spec in db.iter_specials_specs():
        specials.setdefault(spec.specials_chars, spec)
    pattern = re.compile("|".join(re.escape(chars) for chars in sorted(specials, key=len, reverse=True)))

    def test_for_specials(s, pos, parsing_state=None):
        match = pattern.match(s, pos)
        return specials[match.group()] if match else None

    db.test_for_specials = test_for_specials


def _default_context():
    db = latexwalker.get_default_latex_context_db()
    fast_specials(db)
    return db


TEXT_CONTEXT = _default_context()  # for short LaTeX snippets (bibliography fields)


def _alias_target(definitions: dict[str, MacroDef], name: str) -> str:
    seen = set()
    while name in definitions and definitions[name].alias_of and name not in seen:
        seen.add(name)
        name = definitions[name].alias_of
    return name


def _cite_keys(node, extra_groups: list) -> tuple[str, ...]:
    groups = []
    args = node.nodeargd.argnlist if node.nodeargd else []
    if args and args[-1] is not None:
        groups.append(_inner_source(args[-1]))
    groups += [_inner_source(group) for group in extra_groups]
    keys = [key.strip() for group in groups if group for key in group.split(",")]
    return tuple(key for key in keys if key and not _LATEX_LEFTOVERS.search(key) and " " not in key)


def _inner_source(node) -> str | None:
    """An argument's source without its delimiters."""
    if node is None:
        return None
    if isinstance(node, latexwalker.LatexGroupNode):
        return "".join(child.latex_verbatim() for child in node.nodelist)
    return node.latex_verbatim()


def _arg_nodes(node) -> list:
    return [
        arg
        for arg in (node.nodeargd.argnlist if node.nodeargd else []) or []
        if arg is not None and isinstance(arg, latexwalker.LatexGroupNode)
    ]


def _last_arg_nodes(node) -> list:
    args = [arg for arg in (node.nodeargd.argnlist if node.nodeargd else []) or [] if arg is not None]
    if not args:
        return []
    last = args[-1]
    return last.nodelist if isinstance(last, latexwalker.LatexGroupNode) else [last]


def _is_env(node, name: str) -> bool:
    return isinstance(node, latexwalker.LatexEnvironmentNode) and node.environmentname == name


def _is_macro(node, name: str) -> bool:
    return isinstance(node, latexwalker.LatexMacroNode) and node.macroname == name
