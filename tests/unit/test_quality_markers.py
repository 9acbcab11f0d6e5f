"""Residual-marker regexes: each kind is caught, clean prose is not, and both regex engines agree."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from citeworth.quality.markers import MARKERS, residual_marker_mask

# Per marker: sentences that carry it.
DIRTY = {
    "numeric_bracket": ["Frogs breed in choruses [12].", "Frogs breed in choruses [3, 5-7]."],
    "author_year": ["Frogs breed in choruses (Smith, 2010).", "Frogs breed as shown 2010a)."],
    "et_al": ["Frogs breed in choruses as Smith et al. showed.", "Frogs breed as Jones et al found."],
    "hanging_citation": ["Frogs breed in choruses as shown by.", "Frogs breed in choruses, see.",
                         "Frogs breed in choruses (e.g.).", "Frogs breed in choruses As Shown By."],
    "cite_placeholder": ["Frogs breed {{cite:0a1b2c}} in choruses.", "Frogs breed in {{cite:abc"],
    "latex_cite": [r"Frogs breed in choruses \cite{smith2010}."],
    "unresolved_reference": ["Frogs breed in choruses [?]."],
    "bibref": ["Frogs breed in choruses BIBREF12."],
    "empty_brackets": ["Frogs breed in choruses ().", "Frogs breed in choruses [ ] at night."],
    "space_before_stop": ["Frogs breed in choruses over a few nights .", "Do frogs breed in choruses ?"],
    "other_placeholder": ["Frogs breed {{formula:9f8e}} times a year."],
}
CLEAN = [
    "Wood frogs breed in explosive choruses over a few nights in late winter.",
    "The metal and petal samples were weighed in 2010 and again in 2015.",
    "We set the learning rate to 0.001 for all runs (see Section 3).",
    "Table 2 lists the figures for every field, and the results follow in order.",
    "The model uses the vector x_i in equation three as input.",
    "Phylogenetic signal was measured with the phylo.d() function and sample() in R.",
]


def matches(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


@pytest.mark.parametrize("marker", MARKERS, ids=lambda m: m.name)
def test_each_marker_catches_its_residue_and_spares_clean_prose(marker):
    for text in DIRTY[marker.name]:
        assert matches(marker.pattern, text), (marker.name, text)
    for text in CLEAN:
        assert not matches(marker.pattern, text), (marker.name, text)


def test_every_marker_has_dirty_examples():
    assert set(DIRTY) == {m.name for m in MARKERS}


def test_the_residual_marker_mask_is_the_union_of_the_critical_markers():
    texts = CLEAN + [t for texts in DIRTY.values() for t in texts] + [None]
    expected = [text is not None and any(matches(m.pattern, text) for m in MARKERS if m.critical)
                for text in texts]
    for dtype in (object, "str"):
        assert residual_marker_mask(pd.Series(texts, dtype=dtype)).tolist() == expected
    assert not residual_marker_mask(pd.Series(DIRTY["other_placeholder"])).any()  # soft: not counted


@pytest.mark.filterwarnings("ignore:This pattern is interpreted as a regular expression")
@pytest.mark.parametrize("pattern", [m.pattern for m in MARKERS], ids=[m.name for m in MARKERS])
def test_python_re_and_pyarrow_re2_agree(pattern):
    """GX runs the patterns through pandas: RE2 on pyarrow strings, Python's re on objects."""
    texts = CLEAN + [t for texts in DIRTY.values() for t in texts]
    with_re = pd.Series(texts, dtype=object).str.contains(pattern)
    with_re2 = pd.Series(texts, dtype="string[pyarrow]").str.contains(pattern)
    assert with_re.tolist() == with_re2.astype(bool).tolist()
