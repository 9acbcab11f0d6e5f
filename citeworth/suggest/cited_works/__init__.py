"""The cited-works index: every work the curated papers cite, with its metadata, how many of those
papers cite it and the sentences that do, as one on-disk index (``citeworth/suggest/works.py``)
that ``citeworth check --suggest --works`` and ``citeworth lsp`` suggest from."""
