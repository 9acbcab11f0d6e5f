"""The pipeline's papers in the formats people already use: unarXive JSONL and GrabCite's files.

``citeworth run export -S format=unarxive|grabcite`` (``stage.export``) reads every input with its
reader -- any reader, not only LaTeX -- and writes ``<out_dir>/unarxive/<reader>__<shard>.jsonl`` or
``<out_dir>/grabcite/<paper id>.{txt,meta,refs}`` (see ``unarxive.py`` and ``grabcite.py``).
"""
