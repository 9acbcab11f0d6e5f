"""What a check looks like in an editor: diagnostics, code actions, hovers and completions, as
Language Server Protocol types. Positions: the check counts 1-based lines and columns in code
points; LSP counts from 0, columns in the units the client and server agreed on (``codec``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from citeworth.check import RULE_ID
from citeworth.check.formats import MESSAGE, cited_by
from citeworth.check.markdown import KEY
from citeworth.drafts import BIBLIOGRAPHY, FLAGGED, WORKS, Insertion, Sentence, Suggested
from citeworth.lsp.checker import Checked

if TYPE_CHECKING:
    from citeworth.suggest.candidates import Candidate

SOURCE = "citeworth"
_UNITS = {types.PositionEncodingKind.Utf8: ("utf-8", 1), types.PositionEncodingKind.Utf16: ("utf-16-le", 2),
          types.PositionEncodingKind.Utf32: ("utf-32-le", 4)}  # -> Python codec, bytes per unit
# A LaTeX citation command (any with "cite" in its name: natbib, biblatex) and its key argument,
# and a pandoc citation key; the line before the cursor ends inside one while a key is typed.
_TEX_CITE = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^{}]*)\}?")
_TEX_TYPING = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?\s*(?:\[[^\]]*\]\s*){0,2}\{(?:[^{}]*,)?\s*([^{},\s]*)$")
_MD_KEY = re.compile(rf"(?<![\w@])-?@({KEY})")
_MD_TYPING = re.compile(r"(?<![\w@])-?@([\w:.#$%&+?<>~/-]*)$")


def position(lines: Sequence[str], line: int, column: int, codec) -> types.Position:
    """The LSP position of the check's 1-based ``line``:``column``: the column counted in the
    client's units by encoding the line's start (pygls' codec counts character by character, too
    slow for a draft's every flag on lines of whole paragraphs)."""
    prefix = lines[line - 1][:column - 1] if line <= len(lines) else ""
    encoding, width = _UNITS.get(codec.encoding, _UNITS[types.PositionEncodingKind.Utf16])
    units = len(prefix.encode(encoding, "surrogatepass")) // width
    return types.Position(line - 1, units + max(0, column - 1 - len(prefix)))


def sentence_range(sentence: Sentence, lines: Sequence[str], codec) -> types.Range:
    return types.Range(position(lines, sentence.line, sentence.column, codec),
                       position(lines, sentence.end_line, sentence.end_column, codec))


def diagnostics(checked: Checked, codec) -> dict[str, list[types.Diagnostic]]:
    """Per file of the draft, a diagnostic per flag (an empty list clears a file's); a draft that
    cannot be read, or warnings about it, are diagnostics at the top of its main file."""
    found: dict[str, list[types.Diagnostic]] = {file: [] for file in checked.files}
    for sentence in checked.sentences:
        if sentence.status == FLAGGED:
            found[sentence.file].append(diagnostic(sentence, checked.lines(sentence.file), codec))
    top = types.Range(types.Position(0, 0), types.Position(0, 0))
    main = str(checked.project.main)
    notes = [(checked.problem, types.DiagnosticSeverity.Error)] if checked.problem else []
    notes += [(warning, types.DiagnosticSeverity.Information) for warning in checked.warnings]
    for note, severity in notes:
        found.setdefault(main, []).append(types.Diagnostic(top, note, severity=severity, source=SOURCE))
    return found


def diagnostic(sentence: Sentence, lines: Sequence[str], codec) -> types.Diagnostic:
    return types.Diagnostic(sentence_range(sentence, lines, codec), f"{MESSAGE} (score {sentence.score:.2f})",
                            severity=types.DiagnosticSeverity.Warning, code=RULE_ID, source=SOURCE)


def edit(uri: str, version: int | None, lines: Sequence[str], insertion: Insertion,
         codec) -> types.WorkspaceEdit:
    """Insert ``insertion`` into the document ``uri`` as checked at ``version`` (a client refuses
    the edit once the document has changed since)."""
    at = position(lines, insertion.line, insertion.column, codec)
    change = types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, version),
                                    [types.TextEdit(types.Range(at, at), insertion.text)])
    return types.WorkspaceEdit(document_changes=[change])


def cite_action(suggested: Suggested, uri: str, version: int | None, lines: Sequence[str],
                flag: types.Diagnostic, codec, preferred: bool) -> types.CodeAction:
    title = f"Cite {suggested.key}" + (f": {suggested.title}" if suggested.title else "")
    change = edit(uri, version, lines, suggested.insertion, codec)
    return types.CodeAction(title, kind=types.CodeActionKind.QuickFix, diagnostics=[flag],
                            is_preferred=preferred, edit=change)


def work_title(suggested: Suggested) -> str:
    """'Title (2017)' of a work of the cited-works index."""
    year = suggested.entry.year if suggested.entry else None
    return f"{suggested.title or suggested.key}" + (f" ({year})" if year else "")


@dataclass(frozen=True)
class BibDocument:
    """The .bib file a new entry goes to, as the editor holds it (version None: not open)."""

    uri: str
    version: int | None
    text: str


def appended(text: str, entry: str) -> str:
    """What appending ``entry`` to a .bib whose text is ``text`` inserts at its end: a blank line
    between the last entry and the new one."""
    if not text.strip():
        return entry
    return ("" if text.endswith("\n") else "\n") + ("" if text.endswith("\n\n") else "\n") + entry


def add_and_cite_action(suggested: Suggested, uri: str, version: int | None, lines: Sequence[str],
                        flag: types.Diagnostic, codec, bib: BibDocument | None,
                        problem: str | None) -> types.CodeAction:
    """'Add and cite: Title (year)': one workspace edit that appends the work's BibTeX entry to the
    draft's .bib and inserts its citation; disabled, with ``problem`` as the reason and no edit,
    when the .bib cannot take it (``problem`` wins over ``bib``)."""
    title = f"Add and cite: {work_title(suggested)}"
    if problem or bib is None:
        reason = problem or "no .bib file to add the entry to"
        return types.CodeAction(title, kind=types.CodeActionKind.QuickFix, diagnostics=[flag],
                                disabled=types.CodeActionDisabled(reason))
    cite = edit(uri, version, lines, suggested.insertion, codec).document_changes[0]
    bib_lines = bib.text.split("\n")
    end = position(bib_lines, len(bib_lines), len(bib_lines[-1]) + 1, codec)
    entry = types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(bib.uri, bib.version),
                                   [types.TextEdit(types.Range(end, end),
                                                   appended(bib.text, suggested.entry.bibtex))])
    return types.CodeAction(title, kind=types.CodeActionKind.QuickFix, diagnostics=[flag],
                            edit=types.WorkspaceEdit(document_changes=[entry, cite]))


def ignore_action(insertion: Insertion, uri: str, version: int | None, lines: Sequence[str],
                  flag: types.Diagnostic, codec) -> types.CodeAction:
    return types.CodeAction("Ignore this sentence (citeworth)", kind=types.CodeActionKind.QuickFix,
                            diagnostics=[flag], edit=edit(uri, version, lines, insertion, codec))


def flag_hover(sentence: Sentence, suggestions: Sequence[Suggested]) -> str:
    """Markdown: the score of a flagged sentence and its suggestions with their titles (the draft's
    own entries, then works of the cited-works index with how many corpus papers cite them)."""
    text = f"**citeworth**: {MESSAGE} (score {sentence.score:.2f}, {RULE_ID})"
    own = [s for s in suggestions if s.source == BIBLIOGRAPHY]
    works = [s for s in suggestions if s.source == WORKS]
    if own:
        text += "\n\nSuggested from the bibliography:\n" + "\n".join(
            f"{i}. `{s.key}`" + (f": {s.title}" if s.title else "") for i, s in enumerate(own, 1))
    if works:
        text += "\n\nNot in the bibliography yet (cited-works index):\n" + "\n".join(
            f"{i}. {work_title(s)}, `{s.entry.identifier}`, {cited_by(s.entry.cited_by)}"
            + "".join(f"; {reason}" for reason in s.entry.why)
            for i, s in enumerate(works, 1))
    return text


def entry_hover(entry: Candidate, rank: int | None, of: int) -> str:
    """Markdown: a bibliography entry, and its rank for the sentence that cites it."""
    text = f"**{entry.title or entry.key}**"
    details = _byline(entry)
    text += f"\n\n{details}" if details else ""
    if rank is not None:
        text += f"\n\nRank {rank} of {of} in the bibliography for this sentence (citeworth)"
    return text


def _byline(entry: Candidate) -> str:
    """The entry's authors and year, as much of them as it has."""
    return ", ".join(part for part in (", ".join(entry.authors), str(entry.year or "")) if part)


def key_at(line: str, column: int, syntax: str) -> str | None:
    """The citation key a 0-based code-point ``column`` of ``line`` is on: inside a LaTeX
    citation command's braces, or a pandoc ``@key``."""
    if syntax == "md":
        return next((m.group(1) for m in _MD_KEY.finditer(line) if m.start() <= column <= m.end()), None)
    for match in _TEX_CITE.finditer(line):
        start, end = match.span(1)
        if start <= column <= end:
            offset = start
            for key in match.group(1).split(","):
                if offset <= column <= offset + len(key) and key.strip():
                    return key.strip()
                offset += len(key) + 1
    return None


def typed_key(before: str, syntax: str) -> str | None:
    """The start of a key being typed at the end of ``before`` (the line up to the cursor), ""
    right after ``\\cite{``, ``,`` or ``@``; None outside a citation."""
    match = (_MD_TYPING if syntax == "md" else _TEX_TYPING).search(before)
    return match.group(1) if match else None


ADD_ENTRY = "citeworth.addEntry"  # the command a work's completion runs: append its entry to the .bib


def completion_items(ranking: Sequence[Candidate], typed: str, cursor: types.Position,
                     codec_units: int, works: Sequence[Suggested] = ()) -> list[types.CompletionItem]:
    """The draft's entries in the ranker's order for the sentence being written (``sortText``
    keeps it; clients sort alphabetically otherwise), each replacing the ``typed`` start of the key;
    then the works of the cited-works index, whose item also runs ``ADD_ENTRY`` to append the
    work's entry to the draft's .bib (works whose .bib cannot take an entry are not listed)."""
    start = types.Position(cursor.line, cursor.character - codec_units)
    span = types.Range(start, cursor)
    items = [types.CompletionItem(
        entry.key, kind=types.CompletionItemKind.Reference, detail=entry.title,
        documentation=_byline(entry) or None,
        sort_text=f"{rank:05d}", filter_text=entry.key, preselect=rank == 1,
        text_edit=types.TextEdit(span, entry.key),
        label_details=types.CompletionItemLabelDetails(description=f"#{rank}"))
        for rank, entry in enumerate(ranking, 1)]
    usable = [work for work in works if work.entry and work.entry.bib and not work.entry.bib_problem]
    items += [types.CompletionItem(
        work.key, kind=types.CompletionItemKind.Reference, detail=work_title(work),
        documentation=f"{work.entry.identifier}, {cited_by(work.entry.cited_by)}; not in the bibliography "
                      f"yet: accepting adds it to {work.entry.bib}",
        sort_text=f"{len(ranking) + rank:05d}", filter_text=work.key,
        text_edit=types.TextEdit(span, work.key),
        label_details=types.CompletionItemLabelDetails(description=f"new #{rank}"),
        command=types.Command("Add to the bibliography", ADD_ENTRY,
                              arguments=[work.entry.bib, work.entry.bibtex]))
        for rank, work in enumerate(usable, 1)]
    return items
