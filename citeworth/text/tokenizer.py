"""scispacy's tokenizer without spaCy: the same token offsets from the same rules, in pure Python.

The curation splits sentences with pysbd and keeps a cut only where it falls on a token boundary of
scispacy's tokenizer (``combined_rule_tokenizer``, with the one infix citeworth adds) and not right
after one of scispacy's abbreviations (``citeworth.text.sentences``). Only the tokens' offsets are
read, so importing spaCy (2.4 s of ``citeworth check``'s start, and the reason an author's install
would need spaCy, thinc and scipy) is not needed to cut sentences as the dataset cuts them.

``RuleTokenizer`` runs spaCy's own algorithm (``spacy/tokenizer.pyx``: whitespace runs, then
prefixes and suffixes peeled off with special cases checked at each step, infixes, then the special
cases' phrase-matcher pass) on rules exported once from spaCy and scispacy into
``scispacy_tokenizer.json`` (``python -m citeworth.text.scispacy_rules --write``). Tests compare its
offsets and the sentences they give with spaCy's on real papers and on random strings.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections.abc import Callable
from importlib import resources

RULES_FILE = "scispacy_tokenizer.json"
CACHE_SIZE = 100_000  # chunks whose tokens are remembered (spaCy keeps 10,000), then forgotten at once
Token = tuple[int, int]  # (start, length) in characters, as spaCy's IDX and LENGTH


class RuleTokenizer:
    """Token offsets of a text as spaCy's ``Tokenizer`` built from ``rules`` gives them."""

    def __init__(self, rules: dict):
        self.prefix_search = _search(rules["prefix"])
        self.suffix_search = _search(rules["suffix"])
        self.infix_finditer = _compiled(rules["infix"]).finditer if rules["infix"] else None
        self.token_match = _match(rules["token_match"])
        self.url_match = _match(rules["url_match"])
        self.specials: dict[str, list[str]] = rules["special_cases"]
        self.abbreviations = frozenset(rules["abbreviations"])
        self._phrases = self._special_phrases()
        self._chunks: dict[str, list[str]] = {}  # a whitespace-free chunk's tokens, as spaCy caches them

    @classmethod
    @functools.cache
    def default(cls) -> RuleTokenizer:
        """scispacy's tokenizer as the curation uses it (the rules shipped with citeworth)."""
        return cls(json.loads(resources.files("citeworth.text").joinpath(RULES_FILE).read_text("utf-8")))

    def offsets(self, text: str) -> list[Token]:
        """(start, length) of every token of ``text``, whitespace tokens included, as spaCy's
        ``doc.to_array([IDX, LENGTH])`` gives them."""
        words: list[str] = []  # each token's text, and whether one space follows it (spaCy's spacy)
        spaces: list[bool] = []
        in_space, start = text[:1].isspace(), 0
        for i, char in enumerate(text):
            if char.isspace() != in_space:
                if start < i:
                    self._push(text[start:i], words, spaces)
                if char == " ":  # one space after a token belongs to the token, as in spaCy
                    spaces[-1] = True
                    start = i + 1
                else:
                    start = i
                in_space = not in_space
        if start < len(text):
            self._push(text[start:], words, spaces)
            spaces[-1] = text[-1] == " " and not in_space
        return self._apply_special_phrases(text, words, spaces)

    def count(self, text: str) -> int:
        """The tokens of ``text``, whitespace tokens not counted (Table 2's token count)."""
        return sum(not text[start:start + length].isspace() for start, length in self.offsets(text))

    def _push(self, chunk: str, words: list[str], spaces: list[bool]) -> None:
        tokens = self._chunks.get(chunk)
        if tokens is None:
            if len(self._chunks) >= CACHE_SIZE:
                self._chunks.clear()
            tokens = self._chunks[chunk] = self._tokenize(chunk, True)
        words.extend(tokens)
        spaces.extend([False] * len(tokens))

    def _tokenize(self, chunk: str, with_specials: bool) -> list[str]:
        """spaCy's ``_try_specials_and_cache``, ``_split_affixes`` and ``_attach_tokens`` on one chunk."""
        specials = self.specials if with_specials else {}
        if chunk in specials:
            return specials[chunk]
        prefixes, suffixes, last = [], [], -1
        while chunk and len(chunk) != last:
            if self.token_match(chunk) or chunk in specials:
                break
            last = len(chunk)
            pre = self._prefix_length(chunk)
            if pre and chunk[pre:] in specials:
                prefixes.append(chunk[:pre])
                chunk = chunk[pre:]
                break
            suf = self._suffix_length(chunk[pre:])
            if suf and chunk[:-suf] in specials:
                suffixes.append(chunk[-suf:])
                chunk = chunk[:-suf]
                break
            if pre and suf and pre + suf <= len(chunk):
                prefixes.append(chunk[:pre])
                suffixes.append(chunk[-suf:])
                chunk = chunk[pre:-suf]
            elif pre:
                prefixes.append(chunk[:pre])
                chunk = chunk[pre:]
            elif suf:
                suffixes.append(chunk[-suf:])
                chunk = chunk[:-suf]
        return prefixes + self._middle(chunk, specials) + suffixes[::-1]

    def _middle(self, chunk: str, specials: dict[str, list[str]]) -> list[str]:
        """What is left once the affixes are off: a special case, one token, or cut at the infixes."""
        if not chunk:
            return []
        if chunk in specials:
            return specials[chunk]
        if self.token_match(chunk) or self.url_match(chunk) or self.infix_finditer is None:
            return [chunk]
        pieces, start = [], 0
        for match in self.infix_finditer(chunk):
            if match.start() == 0:  # an infix at the very start splits nothing off
                continue
            if match.start() != start:
                pieces.append(chunk[start:match.start()])
            if match.start() != match.end():
                pieces.append(match.group())
            start = match.end()
        if chunk[start:]:
            pieces.append(chunk[start:])
        return pieces

    def _prefix_length(self, chunk: str) -> int:
        match = self.prefix_search(chunk)
        return match.end() - match.start() if match else 0

    def _suffix_length(self, chunk: str) -> int:
        match = self.suffix_search(chunk)
        return match.end() - match.start() if match else 0

    def _special_phrases(self) -> dict[str, list[tuple[str, ...]]]:
        """The special cases spaCy's phrase matcher looks for after tokenizing (those that hold an
        affix, an infix or a space), as the tokens they are cut into without special cases, by first
        token."""
        phrases: dict[str, list[tuple[str, ...]]] = {}
        for string in self.specials:
            if (self._prefix_length(string) or self._suffix_length(string) or " " in string
                    or (self.infix_finditer and any(True for _ in self.infix_finditer(string)))):
                tokens = tuple(self._tokenize(string, False))
                if tokens:
                    phrases.setdefault(tokens[0], []).append(tokens)
        return phrases

    def _apply_special_phrases(self, text: str, words: list[str], spaces: list[bool]) -> list[Token]:
        """spaCy's ``_apply_special_cases``: the runs of tokens spelling a special case (matched on
        the tokens' texts alone, as its phrase matcher does) are taken longest first, then earliest,
        a run not starting or ending on a token taken before; a run whose text (spaces between its
        tokens included) is a special case is replaced by that case's tokens."""
        matches = {(i, i + len(tokens)) for i, word in enumerate(words)
                   for tokens in self._phrases.get(word, ()) if tuple(words[i:i + len(tokens)]) == tokens}
        starts, idx = [], 0  # each token's offset before the replacements, which keep them
        for word, space in zip(words, spaces, strict=True):
            starts.append(idx)
            idx += len(word) + space
        chosen, seen = {}, set()
        for start, end in sorted(matches, key=lambda m: (m[0] - m[1], m[0])):
            spelt = text[starts[start]:starts[end - 1] + len(words[end - 1])]
            if start not in seen and end - 1 not in seen and spelt in self.specials:
                chosen[start] = (end, spelt)
            seen.update(range(start, end))
        offsets, i = [], 0
        while i < len(words):
            if i in chosen:
                end, string = chosen[i]
                idx = starts[i]
                for piece in self.specials[string]:
                    offsets.append((idx, len(piece)))
                    idx += len(piece)
                i = end
            else:
                offsets.append((starts[i], len(words[i])))
                i += 1
        return offsets


def _compiled(pattern: str) -> re.Pattern:
    with warnings.catch_warnings():  # a character class in scispacy's patterns ("Possible set union")
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern)


def _search(pattern: str | None) -> Callable[[str], re.Match | None]:
    return _compiled(pattern).search if pattern else _never


def _match(pattern: str | None) -> Callable[[str], re.Match | None]:
    return _compiled(pattern).match if pattern else _never


def _never(_: str) -> None:
    return None
