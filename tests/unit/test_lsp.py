"""``citeworth lsp`` end to end: a real LSP client (pytest-lsp, with VS Code's capabilities)
starts the server over stdio, the way an editor does, on a two-file LaTeX project with a .bib and
a Markdown draft, with the tiny TF-IDF model of test_check_command and the embedded MiniLM for
suggestions. Diagnostics are compared with ``citeworth check``'s own report of the same project;
code actions are applied to the text and the server's next check must reflect them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from test_check_command import FIXTURES, model_dir, run  # noqa: F401 (model_dir: a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ROOT = Path(__file__).resolve().parents[2]
MAIN = r"""\documentclass{article}
\usepackage{natbib}
\begin{document}
\section{Introduction}
Transformers replaced recurrence with self-attention for machine translation.
Coral reefs bleach when ocean temperatures stay high \citep{Hughes2017}.

\input{sections/method}

\bibliography{refs}
\end{document}
"""
METHOD = ("Garc\\'ia and Okafor showed that photosynthetic efficiency of wheat rises under elevated carbon "
          "dioxide.\nWe train our own model on the data described above.\n")
HUGHES = "Global warming and recurrent mass bleaching of corals"  # Hughes2017's title in refs.bib
WAIT = 60  # seconds for a server answer (the first check loads spaCy; the first suggestion MiniLM)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lsp")
    (folder / "paper" / "sections").mkdir(parents=True)
    (folder / "paper" / "main.tex").write_text(MAIN)
    (folder / "paper" / "sections" / "method.tex").write_text(METHOD)
    shutil.copy(FIXTURES / "suggest" / "paper" / "refs.bib", folder / "paper" / "refs.bib")
    shutil.copytree(FIXTURES / "suggest" / "markdown", folder / "notes")
    (folder / "broken.tex").write_text("{" * 3000 + "deep" + "}" * 3000)
    return folder


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(project, model_dir):  # noqa: F811
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(project / "cache")}
    config = ClientServerConfig([sys.executable, "-m", "citeworth.cli", "lsp", "--stdio"], server_env=env)
    lsp = await config.start()
    lsp.registered = []

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:  # as VS Code does: the server watches files
        lsp.registered += [r.method for r in params.registrations]

    await lsp.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=uri(project),
        initialization_options={"citeworth": {"model": str(model_dir), "threshold": 0, "debounceMs": 50}}))
    yield lsp
    await lsp.shutdown_session()
    await lsp.stop()


def uri(path: Path) -> str:
    return path.resolve().as_uri()


async def until(condition, what: str, seconds: float = WAIT):
    """Wait for ``condition()`` to hold (the client records every notification as it comes)."""
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        await asyncio.sleep(0.05)
    return found


def flags(client: LanguageClient, path: Path) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri(path), []) if d.code == "CW001"]


def open_document(client: LanguageClient, path: Path, version: int = 1) -> str:
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri(path), "markdown" if path.suffix == ".md" else "latex", version, path.read_text())))
    return path.read_text()


def change(client: LanguageClient, path: Path, text: str, version: int) -> None:
    client.diagnostics.pop(uri(path), None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version, uri(path)),
        [types.TextDocumentContentChangeWholeDocument(text)]))


def applied(text: str, edit: types.WorkspaceEdit) -> str:
    """``text`` with the edit's insertions made (positions in UTF-16 units, as negotiated)."""
    [change_] = edit.document_changes
    lines = text.split("\n")
    for item in sorted(change_.edits, key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        line = lines[item.range.start.line]
        column = len(line.encode("utf-16-le")[:item.range.start.character * 2].decode("utf-16-le"))
        lines[item.range.start.line] = line[:column] + item.new_text + line[column:]
    return "\n".join(lines)


async def test_diagnostics_are_the_checks_flags_each_in_its_own_file(client, project, model_dir,  # noqa: F811
                                                                     capsys):
    main, method = project / "paper" / "main.tex", project / "paper" / "sections" / "method.tex"
    open_document(client, main)
    await until(lambda: flags(client, main) and flags(client, method), "diagnostics for both files")
    code, out, _ = run(capsys, str(main), "--model", str(model_dir), "--threshold", "0", "--format", "jsonl")
    expected = {(Path(r["file"]).resolve(), r["line"] - 1, r["column"] - 1, r["end"]["line"] - 1,
                 r["end"]["column"] - 1, f"{r['score']:.2f}")
                for r in map(json.loads, out.splitlines()) if r["status"] == "flagged"}
    published = {(path.resolve(), d.range.start.line, d.range.start.character, d.range.end.line,
                  d.range.end.character, d.message.rsplit("score ", 1)[1].rstrip(")"))
                 for path in (main, method) for d in flags(client, path)}
    assert code == 1 and published == expected and len(expected) == 3
    assert all(d.source == "citeworth" and d.severity == types.DiagnosticSeverity.Warning
               and d.message.startswith("sentence may need a citation (score ")
               for path in (main, method) for d in flags(client, path))
    assert {d.range.start.line for d in flags(client, main)} == {4}  # the cited sentence is not flagged


async def code_actions(client: LanguageClient, path: Path, line: int) -> list[types.CodeAction]:
    at = types.Range(types.Position(line, 0), types.Position(line, 0))
    return await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri(path)), at, types.CodeActionContext(flags(client, path))))


async def test_cite_and_ignore_actions_applied_silence_their_flags(client, project):
    method = project / "paper" / "sections" / "method.tex"
    text = open_document(client, method)
    await until(lambda: len(flags(client, method)) == 2, "the chapter's flags")
    cite = await code_actions(client, method, 0)
    titles = [action.title for action in cite]
    assert titles[0] == "Cite garcia2019wheat: Elevated CO$_2$ and the photosynthetic efficiency of Wheat"
    assert len(titles) == 4 and titles[-1] == "Ignore this sentence (citeworth)" and cite[0].is_preferred
    assert all(a.kind == types.CodeActionKind.QuickFix and a.diagnostics[0].code == "CW001" for a in cite)
    text = applied(text, cite[0].edit)
    assert text.splitlines()[0].endswith("elevated carbon dioxide~\\cite{garcia2019wheat}.")
    change(client, method, text, 2)
    await until(lambda: len(flags(client, method)) == 1, "the cited sentence's flag gone")
    [ignore] = [a for a in await code_actions(client, method, 1) if a.title.startswith("Ignore")]
    text = applied(text, ignore.edit)
    assert text.splitlines()[1:3] == ["% citeworth: ignore", METHOD.splitlines()[1]]
    change(client, method, text, 3)
    await until(lambda: uri(method) in client.diagnostics and not flags(client, method), "no flag left")
    assert await code_actions(client, method, 0) is None  # no flag there any more: nothing to offer


async def test_hover_shows_a_flags_suggestions_and_a_cited_entrys_rank(client, project):
    main = project / "paper" / "main.tex"
    await until(lambda: flags(client, main), "the main file's flags")

    async def hover(line: int, character: int) -> str | None:
        found = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri(main)), types.Position(line, character)))
        return found.contents.value if found else None

    flag = await hover(4, 3)
    assert flag.startswith("**citeworth**: sentence may need a citation (score ")
    assert "1. `Vaswani2017`: Attention Is All You Need" in flag
    entry = await hover(5, MAIN.splitlines()[5].index("Hughes2017") + 2)
    assert entry.startswith(f"**{HUGHES}**\n\nHughes, Kerry, 2017")
    assert entry.endswith("Rank 1 of 4 in the bibliography for this sentence (citeworth)")
    assert await hover(3, 3) is None  # \section{Introduction}: neither a flag nor a key


async def test_completion_ranks_the_drafts_entries_for_the_sentence_being_written(client, project):
    main = project / "paper" / "main.tex"
    lines = MAIN.split("\n")
    lines.insert(6, r"Attention alone suffices for machine translation, as shown by \cite{")
    change(client, main, "\n".join(lines), 2)
    await until(lambda: len(flags(client, main)) == 2, "the new sentence checked")
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri(main)), types.Position(6, len(lines[6])),
        context=types.CompletionContext(types.CompletionTriggerKind.TriggerCharacter, "{")))
    keys = [item.label for item in sorted(found.items, key=lambda item: item.sort_text)]
    assert keys[0] == "Vaswani2017" and sorted(keys, key=str.lower) != keys and len(keys) == 4
    assert found.items[0].detail == "Attention Is All You Need" and found.items[0].preselect
    lines[6] = "Coral reefs are warming, as shown by \\cite{Hug"
    change(client, main, "\n".join(lines), 3)
    await until(lambda: len(flags(client, main)) == 2, "the edited sentence checked")
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri(main)), types.Position(6, len(lines[6]))))
    first = min(found.items, key=lambda item: item.sort_text)
    assert first.label == "Hughes2017" and first.text_edit.range.start.character == len(lines[6]) - 3
    outside = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri(main)), types.Position(4, 3)))
    assert outside is None  # not in a citation: left to other servers (texlab's \ref, words)


async def test_markdown_pandoc_citations_complete_and_hover(client, project):
    draft = project / "notes" / "draft.md"
    text = open_document(client, draft)
    await until(lambda: flags(client, draft), "the Markdown draft's flags")
    text = text.rstrip("\n") + "\n\nSelf-attention replaced recurrence in translation [@"
    change(client, draft, text, 2)
    await until(lambda: len(flags(client, draft)) == 3, "the new paragraph checked")
    last = text.split("\n")[-1]
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri(draft)), types.Position(len(text.split("\n")) - 1, len(last))))
    assert min(found.items, key=lambda item: item.sort_text).label == "Vaswani2017"
    line, row = next((i, row) for i, row in enumerate(text.split("\n")) if "@Hughes2017" in row)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri(draft)), types.Position(line, row.index("Hughes"))))
    assert hover.contents.value.startswith(f"**{HUGHES}**")


async def test_a_bad_draft_is_one_error_diagnostic_and_the_server_goes_on(client, project):
    broken = project / "broken.tex"
    open_document(client, broken)
    [error] = await until(lambda: client.diagnostics.get(uri(broken)), "the parse error")
    assert error.severity == types.DiagnosticSeverity.Error
    assert "broken.tex: cannot parse LaTeX (latex_parse_error)" in error.message
    change(client, broken, "\\documentclass{article}\n\\begin{document}\nFlux varies.\n\\end{document}\n", 2)
    await until(lambda: flags(client, broken), "flags once the draft is fixed")


async def test_a_chapter_deleted_under_the_server_loses_its_flags_with_a_warning(client, project):
    main, method = project / "paper" / "main.tex", project / "paper" / "sections" / "method.tex"
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(method))))
    assert "workspace/didChangeWatchedFiles" in client.registered
    method.unlink()
    client.diagnostics.clear()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(uri(method), types.FileChangeType.Deleted)]))
    await until(lambda: uri(method) in client.diagnostics and uri(main) in client.diagnostics, "a new check")
    assert not client.diagnostics[uri(method)]
    [warning] = [d for d in client.diagnostics[uri(main)] if d.code is None]
    assert warning.severity == types.DiagnosticSeverity.Information
    assert "\\input/\\include of 'sections/method': no such file" in warning.message


async def test_settings_a_missing_model_is_one_message_and_no_crash(client, project, model_dir):  # noqa: F811
    main = project / "paper" / "main.tex"
    client.messages.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"citeworth": {"model": "models/none", "topK": 0, "colour": "red"}}))
    await until(lambda: len(client.messages) == 3, "three messages")
    texts = sorted(message.message for message in client.messages)
    assert texts[0].startswith("citeworth: --model models/none: no such folder")  # the name, as check says it
    assert texts[1].startswith("citeworth: citeworth.topK must be 1 or more (got 0)")
    assert texts[2].startswith("citeworth: unknown setting citeworth.colour")
    assert [m.type for m in client.messages].count(types.MessageType.Error) == 1
    change(client, main, MAIN, 9)
    await asyncio.sleep(1)
    assert uri(main) not in client.diagnostics  # no model: no diagnostics, and no second message
    assert len(client.messages) == 3
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"citeworth": {"model": str(model_dir), "threshold": 1}}))
    await until(lambda: uri(main) in client.diagnostics, "diagnostics with a model again")
    assert not flags(client, main)  # threshold 1: nothing flagged


# --- the cited-works index (citeworth run works): suggestions not in the draft's .bib yet ---------------

REEFS = r"""\documentclass{article}
\begin{document}
Corals bleach during long marine heatwaves.

\bibliography{refs}
\end{document}
"""
REEFS_BIB = "@article{vaswani17,\n  title = {Attention is all you need},\n  author = {Vaswani, A.},\n" \
            "  year = {2017},\n  doi = {10.5555/attention}\n}\n"
CORAL_ENTRY = ("@article{hughes2017global,\n  author = {Hughes},\n"
               "  title = {Global warming and recurrent mass bleaching of corals},\n  journal = {Nature},\n"
               "  year = {2017},\n  doi = {10.5555/coral},\n  pmid = {1111}\n}\n")


@pytest.fixture(scope="module")
def works_index(project) -> Path:
    from works_corpus import write_works_corpus

    from citeworth.sources import InputSpec
    from citeworth.suggest.cited_works.params import WorksParams
    from citeworth.suggest.cited_works.stage import works

    root = project / "corpus"
    glob = write_works_corpus(root)
    works(WorksParams(inputs=[InputSpec("s2orc_json", glob)], data_dir=root / "data" / "citeworth",
                      out_dir=root / "works", stats_path=root / "works.json"))
    return root / "works"


def _reefs(project: Path, name: str, bib: str) -> Path:
    (project / name).mkdir()
    (project / name / "main.tex").write_text(REEFS)
    (project / name / "refs.bib").write_text(bib)
    return project / name / "main.tex"


def _document_text(change: types.TextDocumentEdit, text: str) -> str:
    return applied(text, types.WorkspaceEdit(document_changes=[change]))


async def test_add_and_cite_appends_the_entry_and_cites_it_in_one_edit(client, project, works_index,
                                                                      model_dir):  # noqa: F811
    client.log_messages.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"citeworth": {"model": str(model_dir), "threshold": 0, "works": str(works_index)}}))
    await until(lambda: [m for m in client.log_messages if "cited-works index" in m.message],
                "the index loaded")
    main = _reefs(project, "reefs", REEFS_BIB)
    bib = main.parent / "refs.bib"
    text = open_document(client, main)
    await until(lambda: flags(client, main), "the reef draft's flag")
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri(main)), types.Position(2, 3)))
    # each work with why: its sentences, or the draft's vaswani17 cited beside it in a-reefs
    why = r"(cited for similar sentences in 3 papers|co-cited with 'Attention is all you need \(2017\)')"
    coral_line = r"Global warming and recurrent mass bleaching of corals.*cited by 3 papers in the corpus; "
    assert re.search(coral_line + why, hover.contents.value)
    actions = await code_actions(client, main, 2)
    coral = "Global warming and recurrent mass bleaching of corals (2017)"
    [add] = [a for a in actions if a.title == f"Add and cite: {coral}"]
    assert [a.title for a in actions][0].startswith("Cite vaswani17")  # the draft's own entries come first
    assert add.disabled is None and add.diagnostics[0].code == "CW001"
    entry_change, cite_change = add.edit.document_changes
    assert entry_change.text_document.uri == uri(bib) and entry_change.text_document.version is None
    assert _document_text(entry_change, REEFS_BIB) == REEFS_BIB + "\n" + CORAL_ENTRY
    text = _document_text(cite_change, text)
    assert text.splitlines()[2] == "Corals bleach during long marine heatwaves~\\cite{hughes2017global}."
    assert not any(a.title.startswith("Add and cite: Attention") for a in actions)  # in the .bib by DOI
    bib.write_text(_document_text(entry_change, REEFS_BIB))  # what the editor saves
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(uri(bib), types.FileChangeType.Changed)]))
    change(client, main, text, 2)
    await until(lambda: uri(main) in client.diagnostics and not flags(client, main), "the flag gone: cited")
    loaded = [m for m in client.log_messages if "cited-works index" in m.message]
    assert len(loaded) == 1 and loaded[0].message.endswith("loaded (5 works)")  # once per server


async def test_completion_lists_index_works_after_the_drafts_entries_and_adds_the_chosen(
        client, project, works_index):
    edits: list[types.WorkspaceEdit] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    main = _reefs(project, "completion", REEFS_BIB)
    open_document(client, main)
    await until(lambda: flags(client, main), "the draft's flag")
    lines = REEFS.split("\n")
    lines.insert(3, "Mass bleaching of corals follows heatwaves \\cite{")
    change(client, main, "\n".join(lines), 2)
    await until(lambda: len(flags(client, main)) == 2, "the new sentence checked")
    found = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri(main)), types.Position(3, len(lines[3]))))
    items = sorted(found.items, key=lambda item: item.sort_text)
    assert items[0].label == "vaswani17"  # the draft's own entry first
    work = next(item for item in items if item.label == "hughes2017global")
    assert work.detail == "Global warming and recurrent mass bleaching of corals (2017)"
    assert work.documentation.startswith("doi:10.5555/coral, cited by 3 papers in the corpus")
    assert work.command.command == "citeworth.addEntry" and work.command.arguments[1] == CORAL_ENTRY
    command = types.ExecuteCommandParams(work.command.command, work.command.arguments)
    await client.workspace_execute_command_async(command)
    await until(lambda: edits, "the entry appended")
    [appended] = edits[0].document_changes
    assert _document_text(appended, REEFS_BIB) == REEFS_BIB + "\n" + CORAL_ENTRY


async def test_a_read_only_or_unparsable_bib_gets_the_reason_and_no_edit(client, project, works_index):
    main = _reefs(project, "readonly", REEFS_BIB)
    bib = main.parent / "refs.bib"
    bib.chmod(0o444)
    open_document(client, main)
    await until(lambda: flags(client, main), "the draft's flag")
    [add] = [a for a in await code_actions(client, main, 2) if a.title.startswith("Add and cite: Global")]
    assert add.edit is None and add.disabled.reason == f"{bib} is read-only: no entry can be added to it"
    main = _reefs(project, "unparsable", REEFS_BIB + "@article{broken,\n  title = {never closes\n")
    open_document(client, main)
    await until(lambda: flags(client, main), "the draft's flag")
    [add] = [a for a in await code_actions(client, main, 2) if a.title.startswith("Add and cite: Global")]
    assert add.edit is None and "1 block(s) BibTeX cannot parse" in add.disabled.reason
