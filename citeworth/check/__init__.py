"""``citeworth check``: a citation linter for drafts (LaTeX, Markdown, plain text).

    readers (latex.py, markdown.py, plain.py) -> Draft: blocks of running text, citation spans,
                                                 document offsets -> file:line:column, directives
    draft.sentences -> Sentence per sentence (the curation's splitter; text without citations)
    run.check_drafts -> scores (citeworth.models.scoring, any TrainedModel) and statuses
    baseline.py -> flags accepted earlier; formats.py -> GNU lines, JSON lines, SARIF 2.1.0
    command.main -> ``citeworth check`` (options) -> run.check (exit codes)
"""

RULE_ID = "CW001"  # the check's one rule, in every format

