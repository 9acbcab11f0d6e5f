"""Which CiteWorth field a name says: a subject term, a journal title or a cited venue's (abbreviated) name.

``field_of`` reads a subject term or a journal title by word stems (at a word start, case-insensitive):
"Microbiology and infectious disease" names Biology and Medicine, so it names no one field; "BMC
Microbiology" names Biology. ``venue_field`` reads a venue as a reference gives it, full or abbreviated
in the ISO 4 / NLM manner ("J Clin Microbiol", "Proc Natl Acad Sci USA", "Nucleic Acids Res."): the same
stems plus a few abbreviations and journal names that are whole words ("Med", "Mol", "Cell", "Blood").
A venue that names no field or two ("J Biol Chem", "Nature", "PNAS") says nothing.

MAG files veterinary science, epidemiology and public health under Medicine; neuroscience, immunology
and toxicology (in its journals' papers) under Biology.
"""

from __future__ import annotations

import re

FIELD_WORDS = {
    "Medicine": r"medic|clinic|oncolog|cancer|tumou?r|epidemiolog|health|disease|patholog|pharmac|surg"
                r"|dent|oral|nurs|veterinar|cardiolog|pa?ediatr|infect|therap|neurolog|psychiatr",
    "Biology": r"biolog|biochem|microbio|genetic|genomic|ecolog|evolution|zoolog|botan|plant|virolog"
               r"|physiolog|neurosci|bioinformatic|molecular",
    "Chemistry": r"chemi",
    "Physics": r"physics",
    "Mathematics": r"mathemat|statistic",
    "Computer Science": r"comput|informatic",
    "Engineering": r"engineer",
    "Materials Science": r"materials?\b",
    "Economics": r"econom",
    "Psychology": r"psycholog|behaviou?r|cognit",
}
# Venue names add stems of their abbreviations (at a word start) ...
_VENUE_STEMS = {
    "Medicine": r"clin|lancet|oncol|cardiol|neurol|radiol|hepatol|gastro|nephrol|urol|gyn|obstet|ophthalm"
                r"|dermatol|endocrin|diabet|rheumat|ha?ematol|ana?esth|orthop|transplant|allerg|respir"
                r"|thorac|hypertens|circulation|stroke|epidemiol|pathol|nutr|leuk|carcinog|arthritis",
    "Biology": r"biol|bioch|genet|genom|ecol|evol|zool|virol|physiol|neurophysiol|neurobiol|bacteriol"
               r"|mycol|entomol|proteom|biophys|biotechnol|phytol|immun|parasitol|embo|nucleic|neuron"
               r"|hippocamp|yeast|toxicol",
    "Chemistry": r"chem|chim",
    "Physics": r"physica",
    "Mathematics": r"math|statist",
    "Computer Science": r"informat",
    "Engineering": r"ieee",
    "Materials Science": r"mater\b",
    "Economics": r"econ",
    "Psychology": r"psychol|behav|cogn",
}
# ... and abbreviations or titles that are whole words.
_VENUE_WORDS = {
    "Medicine": r"med|jama|bmj|dis|ther|gut|blood|brain|pain|vaccines?",
    "Biology": r"mol|cell|cells|dev|development|genes?|bot|traffic|rna|dna",
    "Physics": r"phys",
    "Mathematics": r"stat",
    "Engineering": r"eng",
}

_FIELD_PATTERNS = {field: re.compile(rf"\b(?:{words})", re.IGNORECASE)
                   for field, words in FIELD_WORDS.items()}
_VENUE_PATTERNS = {
    field: re.compile(rf"\b(?:{words}|{_VENUE_STEMS[field]})"
                      + (rf"|\b(?:{_VENUE_WORDS[field]})\b" if field in _VENUE_WORDS else ""), re.IGNORECASE)
    for field, words in FIELD_WORDS.items()
}


def field_of(term: str) -> str | None:
    """The one CiteWorth field a subject term or journal title names, or None (no field, or two)."""
    return _one(_FIELD_PATTERNS, term)


def venue_field(venue: str) -> str | None:
    """The one CiteWorth field a cited venue's name (full or abbreviated) names, or None."""
    return _one(_VENUE_PATTERNS, venue)


def _one(patterns: dict[str, re.Pattern], text: str) -> str | None:
    found = [field for field, pattern in patterns.items() if pattern.search(text)]
    return found[0] if len(found) == 1 else None
