"""Markdown drafts through markdown-it-py (CommonMark, with tables, front matter, ``$maths$`` and
footnotes from mdit-py-plugins).

Running text is every paragraph (also in lists and block quotes); headings, code (fenced,
indented, inline code is kept as words but never read as a citation), display maths, tables, HTML
blocks, front matter and footnote definitions are skipped. Inline markup is dropped (link text
stays, images go). Citations: pandoc's ``[@key]``, ``[see @key, p. 3; @other]`` and in-text
``@key``, plus the plain-text patterns (``[12]``, "(Smith et al., 2010)"). ``<!-- citeworth:
ignore -->`` (and ``off`` / ``on``) are directives.

markdown-it gives block tokens their source lines but inline text no offsets: each paragraph's raw
content is mapped back to its source lines (container prefixes such as ``> `` or list indentation
removed), and the text of each inline token is aligned character by character with that content.
"""

from __future__ import annotations

import re
from functools import cache

from citeworth.check.plain import locator, pattern_citations
from citeworth.drafts import Block, Directive, Draft, Span

DIRECTIVE = re.compile(r"<!--\s*citeworth:\s*(\S*?)\s*-->")
IGNORE_COMMENT = "<!-- citeworth: ignore -->"  # a directive silencing the next sentence
KEY = r"\w(?:[\w:.#$%&+?<>~/-]*\w)?"  # pandoc's citation key
PANDOC = re.compile(rf"\[[^\[\]]*?-?@{KEY}[^\[\]]*\]|(?<![\w@])@{KEY}")
_ALIGN_WINDOW = 16  # source characters an inline token's character may be ahead (escapes, entities)
_MATHS = ("math_inline", "math_inline_double")


@cache
def _parser():
    """markdown-it (imported here: a LaTeX check, or a language server's start, goes without it)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    return (MarkdownIt("commonmark", {"html": True}).enable("table")
            .use(front_matter_plugin).use(dollarmath_plugin).use(footnote_plugin))


def read_markdown(text: str, name: str) -> Draft:
    tokens = _parser().parse(text)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    draft = Draft(name, [], locator(text, name), files=[name])
    in_footnotes = 0
    for previous, token in zip([None, *tokens], tokens, strict=False):
        if token.type in ("footnote_block_open", "footnote_block_close"):
            in_footnotes += 1 if token.type.endswith("open") else -1
        elif token.type == "front_matter":
            draft.title, draft.abstract = _front_matter_about(token.content)
        elif token.type == "inline" and previous is not None and previous.type == "heading_open" \
                and draft.title is None:
            draft.title = token.content
        elif token.type == "html_block" and token.map:
            draft.directives += [Directive(line_starts[token.map[0]] + m.start(), m.group(1))
                                 for m in DIRECTIVE.finditer(token.content)]
        elif token.type == "inline" and previous is not None and previous.type == "paragraph_open" \
                and not in_footnotes and token.map:
            offsets = _content_offsets(token.content, token.map[0], text, line_starts)
            draft.blocks.append(_InlineText(token.content, offsets, draft.directives).block(token.children))
    return draft


def _front_matter_about(yaml_text: str) -> tuple[str | None, str | None]:
    """The ``title`` and ``abstract`` a YAML front matter gives (None where it gives none, or is no
    YAML: ``front_matter_bibs`` reports that)."""
    import yaml

    try:
        meta = yaml.safe_load(yaml_text)
    except yaml.YAMLError:
        return None, None
    if not isinstance(meta, dict):
        return None, None
    found = [meta.get(key) for key in ("title", "abstract")]
    return tuple(" ".join(value.split()) if isinstance(value, str) and value.strip() else None
                 for value in found)


def markdown_citations(text: str, protected: list[Span]) -> list[Span]:
    """Pandoc and plain-text citation spans of ``text`` outside ``protected`` spans, sorted, disjoint."""
    found = sorted([m.span() for m in PANDOC.finditer(text)] + pattern_citations(text))
    spans: list[Span] = []
    for start, end in found:
        if any(a < end and start < b for a, b in protected) or (spans and start < spans[-1][1]):
            continue
        spans.append((start, end))
    return spans


class _InlineText:
    """A paragraph's inline tokens -> plain text, each character with its document offset."""

    def __init__(self, content: str, offsets: list[int], directives: list[Directive]):
        self.content, self.offsets, self.directives = content, offsets, directives
        self.cursor = 0
        self.chars: list[str] = []
        self.origins: list[int] = []
        self.protected: list[Span] = []

    def block(self, children) -> Block:
        for child in children or []:
            self._child(child)
        text = "".join(self.chars)
        cites = markdown_citations(text, self.protected)
        origins = self.origins

        def origin(start: int, end: int) -> Span:
            return origins[start], origins[end - 1] + 1

        return Block(text, cites, origin, sorted(cites + self.protected), cited_by_patterns=True)

    def _child(self, child) -> None:
        kind = child.type
        if kind in ("softbreak", "hardbreak"):
            newline = self.content.find("\n", self.cursor)
            self._emit(" ", newline if newline >= 0 else self.cursor)
            self.cursor = newline + 1 if newline >= 0 else self.cursor
        elif kind == "html_inline":
            self._html(child.content)
        elif kind == "link_close":
            self._skip_link_target()
        elif kind in _MATHS or kind == "code_inline":
            start = len(self.chars)
            self._align(child.markup + child.content + child.markup if kind in _MATHS else child.content)
            self.protected.append((start, len(self.chars)))
        elif kind in ("text", "text_special"):
            self._align(child.content)
        # images (their alt text), footnote references, emphasis and link markers: no text

    def _align(self, piece: str) -> None:
        content = self.content
        for char in piece:
            found = content.find(char, self.cursor, self.cursor + _ALIGN_WINDOW)
            if found >= 0:
                self.cursor = found + 1
            self._emit(char, found if found >= 0 else min(self.cursor, len(content) - 1))

    def _emit(self, char: str, content_offset: int) -> None:
        self.chars.append(char)
        self.origins.append(self.offsets[max(content_offset, 0)])

    def _html(self, html: str) -> None:
        found = self.content.find(html, self.cursor)
        if found < 0:
            return
        self.cursor = found + len(html)
        if match := DIRECTIVE.fullmatch(html.strip()):
            self.directives.append(Directive(self.offsets[found], match.group(1)))

    def _skip_link_target(self) -> None:
        """Past ``](url "title")``, ``][label]`` or an autolink's ``>``, so the text after a link
        is not aligned with characters of its URL."""
        content, cursor = self.content, self.cursor
        if content.startswith("](", cursor):
            close = content.find(")", cursor)
            self.cursor = close + 1 if close >= 0 else cursor
        elif content.startswith("][", cursor):
            close = content.find("]", cursor + 2)
            self.cursor = close + 1 if close >= 0 else cursor
        elif content.startswith(("]", ">"), cursor):
            self.cursor = cursor + 1


def _content_offsets(content: str, first_line: int, text: str, line_starts: list[int]) -> list[int]:
    """The document offset of every character of a paragraph's inline ``content`` (and one past
    its end). Each content line is its source line without a container prefix (``> ``, list
    indentation) and, at the paragraph's ends, without surrounding whitespace."""
    offsets: list[int] = []
    for number, line in enumerate(content.split("\n"), start=first_line):
        start = line_starts[min(number, len(line_starts) - 1)]
        end = text.find("\n", start)
        source = text[start:end if end >= 0 else len(text)].rstrip()
        core = line.rstrip()
        column = len(source) - len(core)
        if column < 0 or not source.endswith(core):  # a tab the parser expanded in the indentation
            column = max(source.find(line.strip()), 0)
        offsets.extend(start + column + i for i in range(len(line) + 1))  # + the line break
    return offsets
