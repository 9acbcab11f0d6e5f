"""The language server (pygls 2): editors' documents in, ``citeworth check``'s flags out.

The protocol runs on pygls' event loop; the work (reading, scoring, ranking: ``checker.py``) runs
on one worker thread, so a request is answered while a check runs, and checks run one at a time
in the order asked. A draft is checked when it is opened or saved, and ``debounceMs`` after the
last change; a newer change cancels the wait (and the publishing) of an older one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from citeworth.core.version import tool_version
from citeworth.drafts import BIBLIOGRAPHY, FLAGGED, WORKS, Suggested
from citeworth.lsp import features
from citeworth.lsp.checker import Buffer, Checked, Checker, Project
from citeworth.lsp.projects import draft_syntax, main_file
from citeworth.lsp.settings import SECTION, Settings, read_settings

log = logging.getLogger(__name__)
TRIGGERS = ["{", ",", "@"]  # a key starts: \cite{ or \cite{a, ; pandoc's [@ or @
WATCHED = "**/*.{tex,ltx,latex,bib,bbl,md,markdown,qmd,rmd}"


class CiteworthServer(LanguageServer):
    def __init__(self, encoder):
        super().__init__("citeworth", tool_version())
        self.checker = Checker(encoder)
        self.work = ThreadPoolExecutor(1, thread_name_prefix="citeworth-work")
        self.settings = Settings()
        self.root = Path.cwd()
        self.projects: dict[Path, Project] = {}  # by main file
        self.project_of: dict[Path, Project] = {}  # open file -> the draft it is part of
        self.checked: dict[Path, Checked] = {}  # main file -> its last check
        self.published: dict[Path, set[str]] = {}  # main file -> files given diagnostics
        self.pending: dict[Path, asyncio.Task] = {}  # main file -> its scheduled check
        self.model_problem: str | None = None
        self.configuring: asyncio.Future | None = None  # the settings of initialize, being taken

    async def run(self, function: Callable, *args):
        """``function(*args)`` on the worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.work, function, *args)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_show_message(types.ShowMessageParams(kind, f"citeworth: {message}"))

    async def configure(self, raw, reload: bool) -> None:
        """Take the settings ``raw`` gives; load the model when it is new (or ``reload``); check
        every open draft again."""
        settings, problems = read_settings(raw, self.root, self.settings)
        for problem in problems:
            self.show(problem)
        reload = reload or settings.options.model != self.settings.options.model or self.model_problem
        self.settings = settings
        if reload:
            self.model_problem = await self.run(self.checker.load_model, settings.options, self.root)
            if self.model_problem:  # one message per load: diagnostics wait for a model
                self.show(f"{self.model_problem} (set {SECTION}.model)", types.MessageType.Error)
        opened, problem = await self.run(self.checker.load_works, settings.options.works)
        if problem:
            self.show(f"{problem} (set {SECTION}.works)", types.MessageType.Error)
        elif opened:  # once per index and server: every draft ranks it from then on
            index = self.checker.works.index
            self.window_log_message(types.LogMessageParams(types.MessageType.Info, (
                f"citeworth: cited-works index {index.folder} loaded ({index.size:,} works)")))
        for project in list(self.projects.values()):  # a check under way uses these settings already
            if (task := self.pending.get(project.main)) is None or task.done():
                self.schedule(project, 0)

    async def open(self, path: Path, text: str) -> None:
        syntax = draft_syntax(path)
        if syntax is None:
            return
        main = await self.run(main_file, path, text, self.root) if syntax == "tex" else path
        project = self.projects.setdefault(main, Project(main, syntax))
        project.disk = None
        before, self.project_of[path] = self.project_of.get(path), project
        if before is not None and before is not project:  # a "% !TEX root" written since
            self._forget_unless_open(before)
        self.schedule(project, 0)

    def close(self, path: Path) -> None:
        project = self.project_of.pop(path, None)
        if project is not None:
            self._forget_unless_open(project)

    def _forget_unless_open(self, project: Project) -> None:
        """Check ``project`` again when another of its files is open (the closed one from disk),
        else forget it and clear its diagnostics."""
        if project in self.project_of.values():
            project.disk = None
            self.schedule(project, 0)
            return
        if task := self.pending.pop(project.main, None):
            task.cancel()
        for file in self.published.pop(project.main, set()):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(from_fs_path(file), []))
        self.projects.pop(project.main, None)
        self.checked.pop(project.main, None)

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk (saved, created, deleted): the drafts they are part of are read again."""
        for project in list(self.projects.values()):
            if any(project.holds(path) for path in paths):
                project.disk = None
                self.schedule(project, 0)

    def schedule(self, project: Project, delay_ms: int) -> None:
        if task := self.pending.get(project.main):
            task.cancel()
        self.pending[project.main] = asyncio.get_running_loop().create_task(self._check(project, delay_ms))

    async def _check(self, project: Project, delay_ms: int) -> None:
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        if self.checker.model is None or self.projects.get(project.main) is not project:
            return
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def told(checked: Checked, file: str, found: list) -> None:  # on the worker thread
            loop.call_soon_threadsafe(self._publish_file, project, task, checked, file, found)

        checked = await self.run(self.checker.check, project, self._buffers(project), self.settings.options,
                                 told)
        if self.projects.get(project.main) is not project:  # closed meanwhile
            return
        self.pending.pop(project.main, None)
        self.checked[project.main] = checked
        self.publish(checked)
        if project.scored_with is not self.checker.model:  # the model changed while it was scored
            self.schedule(project, 0)

    def _publish_file(self, project: Project, task: asyncio.Task, checked: Checked, file: str,
                      found: list) -> None:
        """One file's flags as soon as they are scored, while the rest of its draft is (unless the
        draft was closed or a newer check started meanwhile)."""
        if self.projects.get(project.main) is not project or self.pending.get(project.main) is not task:
            return
        lines, codec = checked.lines(file), self.workspace.position_codec
        flags = [features.diagnostic(s, lines, codec) for s in found if s.status == FLAGGED]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(from_fs_path(file), flags, checked.versions.get(file)))
        checked.published_early.add(file)

    def _buffers(self, project: Project) -> dict[Path, Buffer]:
        """The open documents that are part of ``project``, as the editor holds them now."""
        found = {}
        for uri, document in self.workspace.text_documents.items():
            path = _path(uri)
            if project.holds(path):
                found[path] = Buffer(document.source, document.version)
        return found

    def publish(self, checked: Checked) -> None:
        """Every file's diagnostics (those published while the check ran are not sent again, unless
        notes about the draft join them); a file no longer part of the draft is cleared."""
        by_file = features.diagnostics(checked, self.workspace.position_codec)
        main = checked.project.main
        for file in self.published.get(main, set()) - by_file.keys():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(from_fs_path(file), []))
        for file, found in by_file.items():
            if file in checked.published_early and not any(d.code is None for d in found):
                continue
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(from_fs_path(file), found, checked.versions.get(file)))
        self.published[main] = set(by_file)

    def checked_for(self, uri: str) -> Checked | None:
        """The last check of the draft the document ``uri`` is part of (a chapter just opened: the
        check of the main file that includes it, until its own project is known)."""
        path = _path(uri)
        if project := self.project_of.get(path):
            return self.checked.get(project.main)
        return next((checked for checked in self.checked.values() if str(path) in checked.texts), None)

    def client_position(self, checked: Checked, uri: str, at: types.Position) -> tuple[str, int, int]:
        """The file and the check's 1-based line and column (code points) of the client's ``at``."""
        lines = self.workspace.get_text_document(uri).lines
        server = self.workspace.position_codec.position_from_client_units(lines, at)
        return str(_path(uri)), server.line + 1, server.character + 1

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        checked = self.checked_for(params.text_document.uri)
        if checked is None:
            return None
        uri = params.text_document.uri
        file, *start = self.client_position(checked, uri, params.range.start)
        _, *end = self.client_position(checked, uri, params.range.end)
        flagged = [s for s in checked.sentences if s.file == file and s.status == FLAGGED
                   and (s.line, s.column) <= tuple(end) and tuple(start) <= (s.end_line, s.end_column)]
        if not flagged:
            return None
        lines, codec = checked.lines(file), self.workspace.position_codec
        version = checked.versions.get(file)
        actions = []
        for sentence in flagged:
            suggestions, ignore = await self.run(self._fixes, checked, sentence)
            flag = features.diagnostic(sentence, lines, codec)
            actions += [features.cite_action(s, uri, version, lines, flag, codec, preferred=i == 0)
                        for i, s in enumerate(suggestions)
                        if s.insertion is not None and s.source == BIBLIOGRAPHY]
            actions += [self._add_and_cite(s, uri, version, lines, flag)
                        for s in suggestions if s.insertion is not None and s.source == WORKS]
            if ignore is not None:
                actions.append(features.ignore_action(ignore, uri, version, lines, flag, codec))
        self._log_bibliography(checked)
        return actions

    def _add_and_cite(self, suggested: Suggested, uri: str, version: int | None, lines: list[str],
                      flag: types.Diagnostic) -> types.CodeAction:
        problem = suggested.entry.bib_problem
        bib = None if problem else self.bib_document(Path(suggested.entry.bib))
        if bib is None and not problem:
            problem = f"{suggested.entry.bib} cannot be read: the entry cannot be added"
        codec = self.workspace.position_codec
        return features.add_and_cite_action(suggested, uri, version, lines, flag, codec, bib, problem)

    def bib_document(self, path: Path) -> features.BibDocument | None:
        """The .bib file ``path`` as the editor holds it (its open buffer, else the file on disk)."""
        uri = from_fs_path(str(path))
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            return features.BibDocument(uri, document.version, document.source)
        try:
            return features.BibDocument(uri, None, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return None

    async def add_entry(self, path: str, entry: str) -> None:
        """Append ``entry`` to the .bib ``path`` (a work's completion was accepted), unless it
        cannot take it or already has that key: said in a message, no edit."""
        from citeworth.suggest.draft import bib_problem

        bib = self.bib_document(Path(path))
        problem = None if bib is None else bib_problem(Path(path), bib.text, entry)
        if bib is None or problem:
            self.show(problem or f"{path} cannot be read: the entry was not added")
            return
        lines = bib.text.split("\n")
        end = features.position(lines, len(lines), len(lines[-1]) + 1, self.workspace.position_codec)
        change = types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(bib.uri, bib.version),
                                        [types.TextEdit(types.Range(end, end),
                                                        features.appended(bib.text, entry))])
        result = await self.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            types.WorkspaceEdit(document_changes=[change]), label="citeworth: add the cited work's entry"))
        if not result.applied:
            reason = result.failure_reason or "the editor refused the edit"
            self.show(f"the entry was not added to {path}: {reason}")

    def _fixes(self, checked: Checked, sentence):
        return self.checker.suggestions(checked, sentence), self.checker.ignore_insertion(checked, sentence)

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        checked = self.checked_for(params.text_document.uri)
        if checked is None:
            return None
        file, line, column = self.client_position(checked, params.text_document.uri, params.position)
        text = self._line(params.text_document.uri, line)
        sentence = checked.at(file, line, column)
        key = features.key_at(text, column - 1, checked.project.syntax)
        if key is not None:
            markdown = await self.run(self._entry_hover, checked, key, sentence)
        elif sentence is not None and sentence.status == FLAGGED:
            suggestions = await self.run(self.checker.suggestions, checked, sentence)
            markdown = features.flag_hover(sentence, suggestions)
        else:
            return None
        self._log_bibliography(checked)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, markdown)) if markdown else None

    def _entry_hover(self, checked: Checked, key: str, sentence) -> str | None:
        ranker = self.checker.ranker(checked)
        index = ranker.by_key.get(key.lower())
        if index is None:
            return None
        entry = ranker.own[index]
        ranking = self.checker.ranking(checked, sentence.text) if sentence is not None else []
        rank = next((i for i, c in enumerate(ranking, 1) if c.key == entry.key), None)
        return features.entry_hover(entry, rank, len(ranker.own))

    async def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        checked = self.checked_for(params.text_document.uri)
        if checked is None:
            return None
        file, line, column = self.client_position(checked, params.text_document.uri, params.position)
        before = self._line(params.text_document.uri, line)[:column - 1]
        typed = features.typed_key(before, checked.project.syntax)
        if typed is None:
            return None
        sentence = checked.before(file, line, column)
        text = sentence.text if sentence else before
        ranking, works = await self.run(self._rankings, checked, text)
        self._log_bibliography(checked)
        units = self.workspace.position_codec.client_num_units(typed)
        items = features.completion_items(ranking, typed, params.position, units, works)
        return types.CompletionList(False, items)

    def _rankings(self, checked: Checked, text: str):
        works = self.checker.work_ranking(checked, text)
        if works and works[0].entry.bib_problem:  # not listed: no entry could be added
            checked.bibliography_warnings.append(f"cited works not offered: {works[0].entry.bib_problem}")
        return self.checker.ranking(checked, text), works

    def _line(self, uri: str, line: int) -> str:
        """The 1-based ``line`` of the open document ``uri`` as the editor holds it now."""
        lines = self.workspace.get_text_document(uri).lines
        return lines[line - 1].rstrip("\r\n") if line <= len(lines) else ""

    def _log_bibliography(self, checked: Checked) -> None:
        """Warnings about a draft's bibliography (a .bib named but missing), once per check."""
        for warning in checked.bibliography_warnings:
            message = types.LogMessageParams(types.MessageType.Warning, f"citeworth: {warning}")
            self.window_log_message(message)
        checked.bibliography_warnings = []


def _path(uri: str) -> Path:
    return Path(to_fs_path(uri) or uri)


def build(encoder) -> CiteworthServer:
    server = CiteworthServer(encoder)

    @server.feature(types.INITIALIZE)
    def initialize(ls: CiteworthServer, params: types.InitializeParams) -> None:
        folders = [f.uri for f in params.workspace_folders or []]
        root = params.root_uri or (folders[0] if folders else None)
        ls.root = _path(root) if root else Path.cwd()
        # The model loads (on the worker thread) while the editor answers and opens its documents.
        ls.configuring = asyncio.ensure_future(ls.configure(params.initialization_options, reload=True))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CiteworthServer, params: types.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        watching = workspace.did_change_watched_files if workspace else None
        if watching and watching.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions([types.FileSystemWatcher(WATCHED)])
            registration = types.Registration("citeworth-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                              options)
            try:
                await ls.client_register_capability_async(types.RegistrationParams([registration]))
            except Exception as exc:  # a client that offers it but fails: saves still refresh
                log.warning("file watching not registered: %s", exc)
        await ls.configuring

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: CiteworthServer, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if not raw and ls.client_capabilities.workspace and ls.client_capabilities.workspace.configuration:
            [raw] = await ls.workspace_configuration_async(
                types.ConfigurationParams([types.ConfigurationItem(section=SECTION)]))
        await ls.configure(raw, reload=False)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: CiteworthServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.open(_path(params.text_document.uri), params.text_document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CiteworthServer, params: types.DidChangeTextDocumentParams) -> None:
        if project := ls.project_of.get(_path(params.text_document.uri)):
            ls.schedule(project, ls.settings.debounce_ms)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: CiteworthServer, params: types.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        document = ls.workspace.get_text_document(params.text_document.uri)
        ls.files_changed([path])
        if path in ls.project_of:  # a "% !TEX root" written since it was opened
            await ls.open(path, document.source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CiteworthServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(_path(params.text_document.uri))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: CiteworthServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed([_path(change.uri) for change in params.changes])

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def code_action(ls: CiteworthServer, params: types.CodeActionParams):
        return await ls.code_actions(params)

    @server.command(features.ADD_ENTRY)
    async def add_entry(ls: CiteworthServer, path: str, entry: str) -> None:
        await ls.add_entry(path, entry)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: CiteworthServer, params: types.HoverParams):
        return await ls.hover(params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=TRIGGERS))
    async def completion(ls: CiteworthServer, params: types.CompletionParams):
        return await ls.completion(params)

    return server


def serve(encoder, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve one editor over ``stdin``/``stdout`` until it says exit (or goes away)."""
    server = build(encoder)
    try:
        server.start_io(stdin, stdout)
    finally:
        server.work.shutdown(wait=False, cancel_futures=True)
