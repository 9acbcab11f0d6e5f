"""The LaTeX reader on sources the tests write: torture fixtures (unbalanced braces, unknown macros,
nested inputs, citations inside macro arguments and captions, PDF-only and corrupt members), the
bibliography sources and their precedence, positions, and the bulk-tar shard."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import time
from pathlib import Path

import pytest

from citeworth import cli
from citeworth.check import latex as check_latex
from citeworth.core.paper import Paper
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.base import RecordError
from citeworth.sources.latex import parse_tex_file, parse_tex_files
from citeworth.sources.latex.bibliography import normalised_title, read_bbl, read_bib
from citeworth.sources.latex.parser import EXPANSION_ALLOWANCE, Deadline, parse
from citeworth.sources.latex.project import flatten
from citeworth.sources.latex.reader import read

ACMCONF = Path(__file__).resolve().parents[1] / "fixtures" / "latex209" / "acmconf.tex"
BODY_DEFINITIONS = ACMCONF.parents[1] / "latex_body_definitions"
SPLNCS04 = ACMCONF.parents[1] / "latex_splncs04"

MAIN = r"""\documentclass{article}
\usepackage{natbib}
\newcommand{\mycite}[1]{\footnotesize\citet{#1}}
\newcommand{\ours}{\textsc{SciFact}\xspace}
\let\oldcite\cite
\def\dcite#1{\citealp{#1}}
\title{A Test of {\em Everything}}
\begin{document}
\maketitle
\begin{abstract}
We test the reader.
\end{abstract}
\section{Introduction}
% a comment with \cite{commented}
The \ours{} dataset extends prior work~\citep[p.~3]{Alpha,beta}. Caf\'e -- na\"ive ``quotes''.
Unknown \frobnicate{kept text} and \weird macros stay readable {with an unbalanced brace.

\iffalse
Hidden \cite{hidden}.
\fi
Aliases: \mycite{gamma}, \oldcite{delta} and \dcite{alpha}; inside an argument \textbf{see \citep{beta}}.
Maths $x^2$ and \[ y = 1 \] here.
\begin{figure}\caption{A caption citing \cite{captioned}.}\end{figure}
Footnote\footnote{Cited in a note \cite{noted}.} done.
\input{sections/method}
\section{Related Work}
Biblatex \parencite{alpha} and \textcite[see][12]{beta} and \cites{gamma}{delta}.
\bibliography{refs}
\end{document}
"""
METHOD = r"""\subsection{Details}
We follow \citet{epsilon}.
\input{sections/deeper}
"""
DEEPER = "Deep text cites \\cite{alpha}.\n"
STALE = r"\documentclass{article}\begin{document}Old draft \cite{stale}.\end{document}"
BIB = r"""@article{alpha, title={The {Alpha} Paper}, author={Smith, Ann and Jones, Bob}, year={2001},
  doi={10.1000/ABC.1}}
@misc{Beta, title={Beta: a preprint}, author={Lee, Carl}, year={2019}, eprint={1901.00001v2},
  archivePrefix={arXiv}}
@book{gamma, title={Gamma Book}, author={Doe, Dan}, year={1999}}
@inproceedings{delta, title={Delta}, author={Roe, Rita}, year={2005}, url={https://doi.org/10.5555/delta}}
@article{epsilon, title={Epsilon}, author={Poe, Pia}, year={2010}}
@article{captioned, title={Captioned}, author={Cap, Cy}, year={2011}}
@article{noted, title={Noted}, author={Note, Nia}, year={2012}}
@article{unused, title={Unused}, author={Un, Used}, year={2013}}
"""


def project() -> dict[str, bytes]:
    return {
        "main.tex": MAIN.encode(),
        "sections/method.tex": METHOD.encode(),
        "sections/deeper.tex": DEEPER.encode(),
        "_old-main.tex": STALE.encode(),
        "refs.bib": BIB.encode(),
        "figure.png": b"\x89PNG\r\n\x1a\n\0\0",
        "._main.tex": b"\0\x05\x16\x07 AppleDouble",
    }


def tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def bulk_tar(path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            archive.addfile(info, io.BytesIO(data))


def write_folder(root, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


@pytest.fixture
def doc():
    return parse_tex_files(project())


def texts(doc) -> str:
    return "\n".join(p.text for p in doc.paragraphs)


def test_main_file_is_the_one_with_a_document_not_the_stale_draft(doc):
    assert doc.source.main == "main.tex"
    assert doc.source.included == ["main.tex", "sections/method.tex", "sections/deeper.tex"]
    assert "stale" not in doc.cited_keys and "Old draft" not in texts(doc)


def test_every_citation_command_and_alias_is_found_with_its_keys(doc):
    found = [(c.command, c.cite_command, c.keys, c.in_text) for c in doc.citations]
    assert found == [
        ("citep", "citep", ("Alpha", "beta"), True),
        ("mycite", "citet", ("gamma",), True),
        ("oldcite", "cite", ("delta",), True),
        ("dcite", "citealp", ("alpha",), True),
        ("citep", "citep", ("beta",), True),
        ("cite", "cite", ("captioned",), False),  # in a caption: recorded, not running text
        ("cite", "cite", ("noted",), False),  # in a footnote
        ("citet", "citet", ("epsilon",), True),
        ("cite", "cite", ("alpha",), True),
        ("parencite", "parencite", ("alpha",), True),
        ("textcite", "textcite", ("beta",), True),
        ("cites", "cites", ("gamma", "delta"), True),
    ]
    assert "commented" not in doc.cited_keys and "hidden" not in doc.cited_keys


def test_text_is_plain_unicode_with_placeholders(doc):
    text = texts(doc)
    assert "The SciFact dataset extends prior work {{cite:Alpha}}, {{cite:beta}}." in text
    assert "Café – naïve “quotes”." in text
    assert "Unknown kept text and macros stay readable with an unbalanced brace." in text
    assert "see {{cite:beta}}" in text and "Deep text cites {{cite:alpha}}." in text
    assert "A caption" not in text and "Cited in a note" not in text and "Footnote done." in text
    assert text.count("{{formula:") == 2
    without_placeholders = text.replace("{{", "").replace("}}", "")
    assert not set("\\{}") & set(without_placeholders)
    assert doc.title == "A Test of Everything"
    assert [p.text for p in doc.abstract] == ["We test the reader."]


def test_sections_and_numbers(doc):
    by_text = {p.text.split()[0]: p for p in doc.paragraphs}
    assert (by_text["The"].section, by_text["The"].sec_number) == ("Introduction", "1")
    assert (by_text["We"].section, by_text["We"].heading, by_text["We"].sec_number) == (
        "Introduction",
        "Details",
        "1.1",
    )
    assert by_text["Biblatex"].section == "Related Work" and by_text["Biblatex"].sec_number == "2"


def test_positions_map_text_back_to_file_line_and_column(doc):
    deep = next(p for p in doc.paragraphs if "Deep text" in p.text)
    mark = next(c for c in deep.cites if c.key == "alpha")
    assert str(doc.paragraph_position(deep, mark.start)) == "sections/deeper.tex:1:17"
    assert str(doc.paragraph_position(deep, deep.text.index("text"))) == "sections/deeper.tex:1:6"
    first = doc.paragraphs[0]
    assert str(doc.paragraph_position(first, first.text.index("dataset"))) == "main.tex:15:13"
    alias = next(c for c in doc.citations if c.command == "mycite")
    assert str(doc.position(alias.start)) == "main.tex:21:10"  # the alias's own position
    kinds = {r.kind for r in doc.regions}
    assert {"preamble", "comment", "math", "float", "footnote", "skipped", "heading", "abstract"} <= kinds
    hidden = MAIN.index("Hidden")
    assert next(r.kind for r in doc.regions if r.start <= hidden < r.end) == "skipped"


def test_parse_tex_file_reads_a_draft_from_disk(tmp_path):
    write_folder(tmp_path, project())
    doc = parse_tex_file(tmp_path / "main.tex")
    assert doc.source.included[-1] == "sections/deeper.tex" and len(doc.citations) == 12


def test_a_fragment_without_document_body_is_read_whole_only_when_asked(tmp_path):
    chapter = "\\section{Intro}\n% a comment\nText of the chapter \\citep{a}.\n\n$x$ More text.\n"
    files = {"intro.tex": chapter.encode()}
    with pytest.raises(RecordError) as error:
        parse_tex_files(files, "intro.tex")
    assert error.value.reason == "no_document_body"
    doc = parse_tex_files(files, "intro.tex", fragment=True)
    assert [p.text for p in doc.paragraphs] == ["Text of the chapter {{cite:a}}.",
                                                "{{formula:" + doc.paragraphs[1].formulas[0].formula_id
                                                + "}} More text."]
    assert str(doc.paragraph_position(doc.paragraphs[0], 0)) == "intro.tex:3:1"
    assert {r.kind for r in doc.regions} == {"heading", "comment", "math"}  # no preamble
    # a full document is read as always, fragment or not
    full = parse_tex_files(project(), "main.tex", fragment=True)
    assert [p.text for p in full.paragraphs] == [p.text for p in parse_tex_files(project()).paragraphs]


def test_a_main_file_given_is_read_as_latex_whatever_its_name_unless_it_is_binary():
    """``check --syntax tex notes.txt`` and a binary ``figure.tex`` were ``KeyError``s."""
    draft = rb"\documentclass{article}\begin{document}Hi \cite{x}.\end{document}"
    doc = parse_tex_files({"notes.txt": draft}, "notes.txt")
    assert doc.cited_keys == ["x"]
    with pytest.raises(RecordError, match="figure.tex is binary data"):
        parse_tex_files({"figure.tex": b"\x89PNG\x00"}, "figure.tex")


def test_a_malformed_symbol_macro_costs_its_text_not_the_paper():
    """``\\sqrt[`` with no argument made pylatexenc's text conversion raise KeyError: a crash
    (``latex_error`` in a shard, a traceback from ``citeworth check``), found by fuzzing."""
    source = "\\documentclass{article}\\begin{document}Root \\sqrt[ \\cite{k}\n\\end{document}"
    doc = parse_tex_files({"main.tex": source.encode()})
    assert [p.text.split()[0] for p in doc.paragraphs] == ["Root"]


def test_paper_resolves_keys_with_stable_ids(tmp_path):
    write_folder(tmp_path / "paper", project())
    [paper] = read_paper_items(tmp_path / "paper")
    assert isinstance(paper, Paper) and paper.paper_id == "paper" and paper.source == "arxiv_latex"
    cites = [c for p in paper.paragraphs for c in p.cite_spans]
    assert {c.ref_id for c in cites} == {
        "doi:10.1000/abc.1",
        "arxiv:1901.00001",
        "doi:10.5555/delta",
        f"title:{_title_hash('Gamma Book')}",
        f"title:{_title_hash('Epsilon')}",
    }
    first = paper.paragraphs[0]
    assert "prior work {{cite:doi:10.1000/abc.1}}, {{cite:arxiv:1901.00001}}." in first.text
    assert all(first.text[c.start : c.end] == c.text for c in first.cite_spans)
    alpha = paper.bib_entries["doi:10.1000/abc.1"]
    assert (alpha.title, alpha.year, alpha.authors, alpha.ids) == (
        "The Alpha Paper",
        2001,
        ("Smith", "Jones"),
        {"doi": "10.1000/abc.1"},
    )
    # Only cited .bib entries are references (BibTeX writes no others), captions' citations included.
    assert "title:" + _title_hash("Unused") not in paper.bib_entries
    assert "title:" + _title_hash("Captioned") in paper.bib_entries
    assert paper.fields_of_study == () and paper.metadata["field_scheme"] == "arxiv"
    assert [p for p in paper.paragraphs if p.ref_spans][0].ref_spans[0][2] == "formula"


def _title_hash(title: str) -> str:
    import hashlib

    return hashlib.sha1(normalised_title(title).encode()).hexdigest()[:16]


def read_paper_items(folder, metadata=None, **kwargs) -> list:
    [shard] = discover_shards("arxiv_latex", str(folder), metadata=metadata)
    return list(read(shard, **kwargs))


def test_bbl_comes_before_thebibliography_and_bib():
    bbl = read_bbl(
        r"""\begin{thebibliography}{2}
\bibitem[{Smith and Jones(2001)Smith, and Jones}]{alpha}
Ann Smith and Bob Jones. 2001.
\newblock The alpha paper as the bbl has it.
\newblock \emph{Journal}, arXiv:2101.00002.
\bibitem{other} C.~Lee. \newblock Other. \newblock {\em J.}, 2003. doi:10.1000/XYZ.
\end{thebibliography}""",
        "bbl",
    )
    assert bbl["alpha"].ids == {"arxiv": "2101.00002"} and bbl["alpha"].authors == ("Smith", "Jones")
    assert bbl["alpha"].title == "The alpha paper as the bbl has it" and bbl["alpha"].year == 2001
    assert bbl["other"].stable_id == "doi:10.1000/xyz"
    bib = read_bib("@article{MixedCase, title={T}}")
    assert list(bib) == ["mixedcase"]  # BibTeX keys are case-insensitive


def test_splncs04_bbl_titles_come_from_the_bib_beside_it_else_from_the_entry():
    """Springer's splncs04 writes ``Author, A.: Title. In: Venue...`` with no ``\\newblock``: every
    entry's title was None. An entry takes the title of the ``.bib`` entry of its key; without one
    (manning2008ir is not in papers.bib), the title after the authors' colon, as it takes it from
    the ``\\newblock`` structure in other styles."""
    bbl = read_bbl((SPLNCS04 / "main.bbl").read_text(), "bbl")
    assert {key: reference.title for key, reference in bbl.items()} == {
        "devlin2019bert": "BERT: Pre-training of deep bidirectional transformers for language understanding",
        "lo2020s2orc": "S2ORC: The semantic scholar open research corpus",
        "manning2008ir": "Introduction to Information Retrieval",
        "vaswani2017attention": "Attention is all you need",
        "wright2021citeworth": "CiteWorth: Cite-worthiness detection for improved scientific document "
                               "understanding",
        "ye2019bp": "BP-transformer: Modelling long-range context via binary partitioning"}
    assert bbl["devlin2019bert"].authors == ("Devlin", "Chang", "Lee", "Toutanova")
    assert bbl["ye2019bp"].stable_id == "arxiv:1911.04070"
    blocks = read_bbl("\\bibitem{k} Author, A.: Title of the work.\n\\newblock In: Venue. pp. 1--10. "
                      "Publisher (2020)", "bbl")
    assert blocks["k"].title == "Title of the work" and blocks["k"].authors == ("Author",)

    [paper] = read_paper_items(SPLNCS04)
    bib = read_bib((SPLNCS04 / "papers.bib").read_text())
    expected = {bib.get(key).title if key in bib else bbl[key].title for key in bbl}
    assert {entry.title for entry in paper.bib_entries.values()} == expected
    assert "Attention is All you Need" in expected  # the .bib's, not the .bbl's rendering


def test_biblatex_bbl_entries():
    bbl = read_bbl(
        r"""\entry{knuth}{book}{}
  \name{author}{1}{}{{{}{family={Knuth},given={Donald}}}}
  \field{title}{The {\TeX}book}
  \field{year}{1984}
  \verb{doi}
  \verb 10.1000/TEXBOOK
  \endverb
\endentry""",
        "bbl",
    )
    assert bbl["knuth"].authors == ("Knuth",) and bbl["knuth"].ids == {"doi": "10.1000/texbook"}
    assert bbl["knuth"].year == 1984


def test_inline_thebibliography_and_main_bbl_resolve(tmp_path):
    main = (
        r"\documentclass{article}\begin{document}\section{A}Text \cite{k1} and \cite{k2}."
        r"\begin{thebibliography}{9}\bibitem{k1} A. Author. \newblock Inline title. \newblock 2000."
        r"\end{thebibliography}\end{document}"
    )
    write_folder(
        tmp_path / "p",
        {
            "p.tex": main.encode(),
            "p.bbl": rb"\bibitem{k2} B. Author. \newblock From the bbl. \newblock 2001.",
        },
    )
    [paper] = read_paper_items(tmp_path / "p")
    titles = {entry.title for entry in paper.bib_entries.values()}
    assert {"Inline title", "From the bbl"} <= titles
    assert all(c.ref_id for p in paper.paragraphs for c in p.cite_spans)


def test_torture_members_in_a_bulk_tar_are_quarantined_with_reasons_and_the_shard_goes_on(tmp_path):
    good = tar_gz(project())
    single = gzip.compress(
        rb"\documentclass{article}\begin{document}One file \cite{x}."
        rb"\begin{thebibliography}{1}\bibitem{x} X. \newblock Y. \end{thebibliography}"
        rb"\end{document}",
        mtime=0,
    )
    shard_file = tmp_path / "arXiv_src_2212_001.tar"
    bulk_tar(
        shard_file,
        {
            "2212/2212.00001.gz": good,
            "2212/2212.00002.pdf": b"%PDF-1.5 only a pdf",
            "2212/2212.00003.gz": good[:200] + b"\0garbage" * 10,
            "2212/2212.00004.gz": single,
            "2212/2212.00005.gz": tar_gz({"style.sty": b"\\def\\x{}", "fig.png": b"\x89PNG"}),
            "2212/2212.00006.gz": tar_gz(
                {"m.tex": rb"\documentclass{article}\begin{document}\cite{a}\end{document}"}
            ),
        },
    )
    metadata = tmp_path / "meta.jsonl"
    metadata.write_text(
        json.dumps(
            {
                "id": "2212.00001",
                "categories": "cs.CL cs.LG",
                "title": "Meta title",
                "doi": "10.1/X",
                "versions": [{"created": "Mon, 5 Dec 2022 10:00:00 GMT"}],
            }
        )
        + "\n"
    )
    [shard] = discover_shards("arxiv_latex", str(tmp_path / "*.tar"), metadata=str(metadata))
    assert (shard.name, shard.release) == ("arXiv_src_2212_001", "2212")
    items = list(read_shard(shard))
    outcome = {
        item.location if isinstance(item, BadRecord) else item.paper_id: item.reason
        if isinstance(item, BadRecord)
        else "ok"
        for item in items
    }
    assert outcome == {
        "2212.00001": "ok",
        "member 2212/2212.00002.pdf": "pdf_only",
        "member 2212/2212.00003.gz": "corrupt_gzip",
        "2212.00004": "ok",
        "member 2212/2212.00005.gz": "no_main_tex",
        "member 2212/2212.00006.gz": "no_bibliography",
    }
    assert not any(item.fatal for item in items if isinstance(item, BadRecord))
    paper = items[0]
    assert (paper.title, paper.fields_of_study, paper.ids) == (
        "Meta title",
        ("cs.CL", "cs.LG"),
        {"arxiv": "2212.00001", "doi": "10.1/x"},
    )
    assert paper.metadata["year"] == 2022 and paper.metadata["source_name"] == "2212.00001.gz"
    assert items[3].fields_of_study == ()  # no metadata row: curation rejects it (no_fields_of_study)


def acmconf(repeats: int) -> str:
    """The LaTeX 2.09 fixture with its sections written ``repeats`` times."""
    text = ACMCONF.read_text()
    start, end = text.index("\\section{Introduction}"), text.index("\\begin{thebibliography}")
    return text[:start] + text[start:end] * repeats + text[end:]


def test_a_latex_209_paper_reads_paragraph_by_paragraph():
    doc = parse_tex_file(ACMCONF)
    text = texts(doc)
    assert doc.title == "Polynomial Bounds for Black-Box Quantum Search"  # without its \thanks
    assert [p.section for p in doc.paragraphs] == ["Introduction"] * 3 + ["The Model"] * 2 + [
        "Lower Bounds"] * 4 + ["Conclusion"]
    # \begin{equation} closed by the shorthand \ee: the rest of the paper is not one formula.
    assert "builds on." in text and doc.inline_bibliography and len(doc.cited_keys) == 6
    # \be ... \ee and \ba ... \ea are formulas, not text; the authors' parboxes are not text.
    assert not {"α", "θ", "≤", "="} & set(text)
    assert not {"2in", "Fixture", "Foundation"} & set(text.split())
    assert "steps, {{formula:" in text and "}} where" in text


def test_unclosed_maths_ends_at_its_paragraph_break():
    """An equation whose \\end (or ``\\]``) never comes held the rest of the paper (pylatexenc
    reads to the end); LaTeX ends maths at a blank line, and so does the reader."""
    closed = ACMCONF.read_text()
    unclosed = closed.replace("\\ket{k},\n\\ee", "\\ket{k},")
    assert unclosed != closed
    doc = parse_tex_files({"main.tex": unclosed.encode()})
    assert [p.section for p in doc.paragraphs] == [p.section for p in parse_tex_file(ACMCONF).paragraphs]
    assert doc.inline_bibliography and "builds on." not in texts(doc)  # in the formula, as in LaTeX
    source = "\\documentclass{article}\\begin{document}Text \\[ x = 1\n\nNext \\cite{k}.\n\\end{document}"
    doc = parse_tex_files({"main.tex": source.encode()})
    assert [p.text.split()[0] for p in doc.paragraphs] == ["Text", "Next"] and doc.cited_keys == ["k"]


def test_unclosed_macro_arguments_cost_parse_work_linear_in_the_source():
    """runaway.tex: four unclosed braces in a user macro's argument, whose expansions re-parsed
    the rest of the paper at every nested use (34 s, then a recursion error). Work is counted in
    steps (tokens read and nodes walked) per character, against the paper it is made from."""
    plain, plain_work = steps_per_character("acmconf.tex")
    doc, work = steps_per_character("runaway.tex")
    assert work < 1.5 * plain_work
    assert len(doc.paragraphs) == 8 * len(plain.paragraphs)  # each read once


def test_expansions_parse_at_most_the_paper_and_an_allowance():
    """Two macros expanding into each other double the distinct bodies at each level, to the
    nesting limit: 1,024 bodies of 1 KB from a 1 KB paper (1.6 million steps, 8 s). Past the
    allowance a macro's argument is read unexpanded."""
    source = (r"\documentclass{article}\newcommand{\x}[1]{\y{#1a}\y{#1b}}\newcommand{\y}[1]{\x{#1c}\x{#1d}}"
              r"\begin{document}\x{" + "lorem " * 150 + "}\n\\end{document}")
    deadline = Deadline()
    doc = parse(flatten({"main.tex": source}, "main.tex"), deadline)
    assert deadline.steps < 2 * EXPANSION_ALLOWANCE and "lorem" in texts(doc)


def steps_per_character(fixture: str):
    source = (ACMCONF.parent / fixture).read_text()
    deadline = Deadline()
    return parse(flatten({"main.tex": source}, "main.tex"), deadline), deadline.steps / len(source)


def test_environments_defined_after_begin_document_are_read_with_linear_work():
    """quant-ph/9802040's pattern: 11 ``\\newenvironment{thm}{\\begin{theorem}}{\\end{theorem}}`` and
    22 ``\\newcommand{\\bthm}{\\begin{theorem}}``-style shorthands defined after
    ``\\begin{document}``. pylatexenc's work grew about exponentially with their number (parsing
    the bodies, and the shorthands' names as the delimiters they stand for): the paper was
    quarantined at the reader's limit. Now it is read, every statement and citation in it, with
    the work of the same paper whose definitions are in the preamble (which is not parsed)."""
    [paper] = read_paper_items(BODY_DEFINITIONS)  # within the reader's TIME_LIMIT, or latex_timeout
    assert isinstance(paper, Paper), paper
    assert [p.section for p in paper.paragraphs] == ["Introduction", "Results", "Proofs"]
    text = " ".join(p.text for p in paper.paragraphs)
    sentences = re.findall(r"[A-Z][^.]*\.(?= |$)", text)
    assert len(sentences) == 3 + 11 + 11  # the introduction's, each environment's, each shorthand's
    assert "Bound entangled states cannot be distilled at all" in text and text.endswith("pure states.")
    spans = [span for p in paper.paragraphs for span in p.cite_spans]
    assert len(spans) == 10 and len({s.ref_id for s in spans}) == 7 == len(paper.bib_entries)
    assert all(s.ref_id in paper.bib_entries for s in spans)

    source = (BODY_DEFINITIONS / "main.tex").read_text()
    definitions = "".join(re.findall(r"^\\new(?:environment|command)\{.*\n", source, re.M))
    assert definitions.count("\n") == 33
    begin = "\\begin{document}"
    in_preamble = source.replace(definitions, "").replace(begin, definitions + begin)
    work, preamble_work = (steps_of(text) for text in (source, in_preamble))
    assert work < 1.3 * preamble_work  # was > 1,000 times as much (benchmarks/latex_definitions.py)


def test_a_def_shorthand_defined_in_the_body_is_not_read_as_its_delimiter_where_defined():
    """``\\def\\ee{\\end{equation}}`` after ``\\begin{document}``: the name was read as the
    ``\\end{equation}`` it stands for, and the paper came out without a paragraph."""
    source = ("\\documentclass{article}\\begin{document}\n"
              "\\def\\be{\\begin{equation}}\\def\\ee{\\end{equation}}\n"
              "\\section{Intro}\nText \\cite{k1}\n\\be x = 1 \\ee\nand more \\cite{k2}.\n\nNext paragraph.\n"
              "\\end{document}\n")
    doc = parse_tex_files({"main.tex": source.encode()})
    assert [(p.section, p.text.split()[0]) for p in doc.paragraphs] == [("Intro", "Text"), ("Intro", "Next")]
    assert doc.cited_keys == ["k1", "k2"] and doc.paragraphs[0].formulas[0].latex == "\\be x = 1 \\ee"


def steps_of(source: str) -> int:
    deadline = Deadline()
    parse(flatten({"main.tex": source}, "main.tex"), deadline)
    return deadline.steps


def test_the_time_limit_holds_inside_the_parse_and_the_shard_goes_on(tmp_path):
    """A paper whose parse alone takes seconds is quarantined ``latex_timeout`` within the
    limit + 1 s (the deadline used to be checked only after pylatexenc's parse), and the papers
    after it in the shard are read."""
    slow = acmconf(repeats=400)  # about 1.5 MB: seconds to parse
    bulk_tar(
        tmp_path / "src.tar",
        {
            "2212/2212.00001.gz": tar_gz({"ms.tex": ACMCONF.read_bytes()}),
            "2212/2212.00002.gz": tar_gz({"ms.tex": slow.encode()}),
            "2212/2212.00003.gz": tar_gz({"ms.tex": ACMCONF.read_bytes()}),
        },
    )
    [shard] = discover_shards("arxiv_latex", str(tmp_path / "src.tar"))
    items, seconds = [], []
    papers = read(shard, time_limit=0.5)
    while True:
        start = time.process_time()  # CPU time: a loaded machine (parallel tests) stretches the wall clock
        item = next(papers, None)
        if item is None:
            break
        items.append(item)
        seconds.append(time.process_time() - start)
    assert [getattr(item, "reason", "paper") for item in items] == ["paper", "latex_timeout", "paper"]
    assert seconds[1] < 0.5 + 1, seconds
    assert "time limit of 0.5 s" in items[1].detail


def test_check_stops_at_the_time_limit_with_a_clear_message(tmp_path, capsys, monkeypatch):
    from citeworth.check.run import read_drafts  # imports the check's models: not timed

    path = str(tmp_path / "slow.tex")
    Path(path).write_text(acmconf(repeats=400))
    monkeypatch.setattr(check_latex, "PARSE_SECONDS", 0.5)
    message = f"{path}: cannot parse LaTeX (latex_timeout): not read within the time limit of 0.5 s"
    start = time.process_time()  # CPU time: the deadline is on the wall clock, so load only shortens it
    assert read_drafts([path]) == ([], [message])
    assert time.process_time() - start < 0.5 + 1
    assert cli.main(["check", path]) == 2 and message in capsys.readouterr().err


def test_single_eprint_and_corrupt_eprint(tmp_path):
    (tmp_path / "2101.00001.gz").write_bytes(tar_gz(project()))
    (tmp_path / "2101.00002.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
    shards = discover_shards("arxiv_latex", str(tmp_path / "*.gz"))
    items = [item for shard in shards for item in read_shard(shard)]
    assert isinstance(items[0], Paper) and items[0].ids == {"arxiv": "2101.00001"}
    assert isinstance(items[1], BadRecord) and items[1].reason == "corrupt_gzip"


def test_rereading_gives_identical_papers(tmp_path):
    write_folder(tmp_path / "paper", project())
    assert read_paper_items(tmp_path / "paper") == read_paper_items(tmp_path / "paper")
