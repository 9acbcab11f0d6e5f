"""``citeworth lsp``: a language server over stdio. Imports are light here, so that ``--help`` is
quick; pygls, spaCy and the model load once the editor has connected."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from citeworth.check import RULE_ID

DESCRIPTION = f"""\
A language server (LSP, over stdin/stdout) for LaTeX and Markdown drafts: `citeworth check
--suggest` in the editor, with the same readers, rules, model and ranker.

  Diagnostics    one warning per sentence that may need a citation ({RULE_ID}, with its score), on
                 open, on save and after a pause in typing; a LaTeX project is checked as one
                 draft from its main file (a '% !TEX root = main.tex' comment, else the file with
                 \\documentclass that \\input's it) and each flag goes to the file it is in
  Code actions   'Cite KEY' for the top entries of the draft's own bibliography (~\\cite{{KEY}},
                 Markdown [@KEY], before the final stop); with a cited-works index, 'Add and
                 cite: Title (year)' for its top works the .bib lacks (one edit: the BibTeX entry
                 appended to the .bib, the citation inserted; disabled, with the reason, when the
                 .bib is read-only or does not parse); and 'Ignore this sentence' (the
                 '% citeworth: ignore' / '<!-- citeworth: ignore -->' comment)
  Hover          a flag: its score and suggestions; a \\cite{{}} key or @key: the entry's title,
                 authors, year and its rank for that sentence
  Completion     inside \\cite{{ or after [@: the draft's entries ranked for the sentence being
                 written, then the cited-works index's works (accepting one appends its entry)

Settings (initializationOptions, or workspace settings under "citeworth"): model (a model folder;
default: the best by dev F1 in the workspace's metrics/models.json), threshold, topK, bib (.bib
files for Markdown drafts whose front matter names none), works (a cited-works index folder, written
by `citeworth run works`), debounceMs. A missing model or index is one message; the server keeps
running. The index is opened once per server.

The model, the encoder and the bibliography's vectors are loaded once per server; after an edit
only the paragraphs whose text changed are split into sentences and scored again."""

EPILOG = """\
editors (each starts the command `citeworth lsp`): Neovim (vim.lsp.start / lspconfig), VS Code
(a generic LSP client extension), Emacs (eglot), Helix (languages.toml); see
docs/authors/editors.md."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citeworth lsp", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stdio", action="store_true",
                        help="talk over stdin/stdout (the only transport; accepted as editors pass it)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging (stderr)")
    args = parser.parse_args(argv)
    protocol = _protocol_stdout()
    handler = logging.StreamHandler(sys.stderr)  # its level holds for libraries that set their own (bm25s)
    handler.setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    logging.basicConfig(handlers=[handler], level=handler.level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from citeworth.core.io import user_cache_dir
    from citeworth.lsp.settings import TORCH_THREADS
    from citeworth.suggest import WITHOUT_ENCODER, encoder_available

    encoder = None
    if encoder_available():
        from citeworth.suggest.dense import Encoder

        encoder = Encoder(cache_dir=user_cache_dir(), threads=TORCH_THREADS)  # loads after the first check
    else:
        logging.getLogger("citeworth.lsp").warning(WITHOUT_ENCODER)
    try:
        from citeworth.core import collector

        with collector.starting():
            from citeworth.lsp.server import serve
        serve(encoder, sys.stdin.buffer, protocol)
    finally:
        if encoder is not None:
            encoder.close()
    return 0


def _protocol_stdout():
    """The protocol's stdout; from here on anything else written to file descriptor 1 (a library's
    print, a child process's output) goes to stderr, where it cannot corrupt the protocol."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return protocol
