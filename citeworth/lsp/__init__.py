"""``citeworth lsp``: ``citeworth check`` and ``--suggest`` in an editor, as a language server.

    command.py   the subcommand (light: pygls, spaCy and the model load once an editor connects)
    server.py    the protocol (pygls): documents, debounced checks, diagnostics, code actions,
                 hovers, completions
    checker.py   the work, on one thread: the check's readers, rules, scoring and ranker, with the
                 model, the splitter and the encoder loaded once and each paragraph's sentence
                 bounds and scores kept between checks
    projects.py  which draft a file is part of (a LaTeX project's main file); its files with the
                 editor's buffers over them
    features.py  a check as LSP diagnostics, code actions, hovers and completion items
    settings.py  initialization options and workspace settings -> CheckOptions
"""
