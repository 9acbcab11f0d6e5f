"""A real editor on ``citeworth lsp``: Debian's Neovim, headless, with its built-in LSP client
(``vim.lsp``, as docs/authors/editors.md's snippet configures it) opens a LaTeX chapter of a two-file project
and records the diagnostics it receives for both files (threshold 0: every uncited sentence is a
flag). The workspace holds a trained TF-IDF model as the pipeline leaves one (models/ and
metrics/models.json), so the server finds its default model there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from programs import installed

from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models.fitting import fit_model, model_spec
from citeworth.models.spec import TfidfSpec

NVIM = installed("nvim", package="neovim", needed_for="the real-editor test of `citeworth lsp`")
ROOT = Path(__file__).resolve().parents[2]
# Neovim 0.7 (Debian 12) has vim.lsp.start_client; 0.8+ also vim.lsp.start.
CLIENT = r"""
local out, python = os.getenv("CITEWORTH_TEST_OUT"), os.getenv("CITEWORTH_TEST_PYTHON")
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = "citeworth",
  cmd = {python, "-m", "citeworth.cli", "lsp"},
  root_dir = vim.fn.getcwd(),
  init_options = {citeworth = {threshold = 0}},
})
vim.lsp.buf_attach_client(buf, id)
local function flags()
  local count = 0
  for _ in pairs(vim.diagnostic.get()) do count = count + 1 end
  return count
end
vim.wait(90000, function() return flags() >= 3 end, 100)
local found = {}
for _, d in ipairs(vim.diagnostic.get()) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(found, {file = vim.api.nvim_buf_get_name(d.bufnr), line = d.lnum, col = d.col,
                       end_line = d.end_lnum, end_col = d.end_col, message = d.message,
                       source = d.source, code = d.code or lsp.code})
end
vim.fn.writefile({vim.fn.json_encode(found)}, out)
vim.lsp.stop_client(id)
vim.cmd("qa!")
"""
MAIN = "\\documentclass{article}\n\\begin{document}\nYeast cells divide.\n\\input{chapter}\n\\end{document}\n"
CHAPTER = ("Previous studies reported that flux varies with temperature.\n"
           "It has been shown that yeast depends on cells \\cite{smith2020}.\n"
           "Several groups reported flux in plants.\n")


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A draft and, as the pipeline leaves them, a saved model and metrics/models.json."""
    samples = [("Previous studies reported that {} varies with {}.", CITE_WORTHY),
               ("Several groups reported {} in {}.", CITE_WORTHY),
               ("We measure {} in our own {}.", NOT_CITE_WORTHY),
               ("In this section we describe {} and {}.", NOT_CITE_WORTHY)]
    words = ["flux", "cells", "yeast", "plants", "temperature"]
    records = [{"mag_field_of_study": ["Biology"],
                "samples": [{"text": text.format(a, b), "label": label} for text, label in samples]}
               for a in words for b in words]
    spec = model_spec("tfidf_lr", TfidfSpec(kind="tfidf_lr"))
    fit_model(spec, records, records[:5], 1, None).save(tmp_path / "models" / "tfidf_lr")
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "models.json").write_text(json.dumps({"tfidf_lr": {"dev_f1": 0.9}}))
    (tmp_path / "main.tex").write_text(MAIN)
    (tmp_path / "chapter.tex").write_text(CHAPTER)
    (tmp_path / "client.lua").write_text(CLIENT)
    return tmp_path


@pytest.mark.slow
def test_neovim_receives_the_diagnostics_of_a_chapter_and_its_main_file(workspace):
    out = workspace / "diagnostics.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CITEWORTH_TEST_OUT": str(out),
           "CITEWORTH_TEST_PYTHON": sys.executable, "XDG_CACHE_HOME": str(workspace / "cache"),
           "XDG_STATE_HOME": str(workspace / "state"), "XDG_DATA_HOME": str(workspace / "data")}
    done = subprocess.run([NVIM, "--headless", "--clean", "chapter.tex", "-c", "luafile client.lua"],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text())
    by_file = {}
    for diagnostic in found:
        by_file.setdefault(Path(diagnostic["file"]).name, []).append(diagnostic)
    assert sorted(by_file) == ["chapter.tex", "main.tex"]
    chapter = sorted(by_file["chapter.tex"], key=lambda d: d["line"])
    assert [d["line"] for d in chapter] == [0, 2]  # line 1 cites: never flagged
    assert all(d["code"] == "CW001" and d["source"] == "citeworth"
               and d["message"].startswith("sentence may need a citation (score ") for d in found)
    assert chapter[0]["col"] == 0 and chapter[0]["end_col"] == len(CHAPTER.splitlines()[0])
    assert [d["line"] for d in by_file["main.tex"]] == [2]  # the chapter's main file, found and checked
