"""Read an env file the way Docker Compose does, so that one file (``docker/cluster.env``) configures
both ``docker/compose.yaml`` (its ``env_file:``) and the native cluster (``citeworth cluster``).

The syntax is Compose's: ``KEY=VALUE`` lines, ``#`` comments and blank lines ignored; unquoted and
double-quoted values are interpolated (``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``,
``${VAR:?error}``, ``${VAR?error}``, ``${VAR:+alt}``, ``${VAR+alt}``, nested defaults, ``$$`` for
a literal ``$``); single-quoted values are literal; an unquoted value's comment starts at `` #``.
A variable is looked up among the keys defined earlier in the file, then in the given environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)")
_DOUBLE_QUOTE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"'}


class EnvFileError(ValueError):
    """A line the syntax does not allow, or a required variable (``${VAR:?error}``) that is unset."""


def read_env_file(path: Path, environment: Mapping[str, str]) -> dict[str, str]:
    """The variables ``path`` defines, interpolated with ``environment``."""
    try:
        return parse_env(path.read_text(), environment)
    except EnvFileError as exc:
        raise EnvFileError(f"{path}: {exc}") from None


def parse_env(text: str, environment: Mapping[str, str]) -> dict[str, str]:
    defined: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise EnvFileError(f"line {number}: not KEY=VALUE: {line!r}")
        key, raw = match.groups()
        try:
            defined[key] = _value(raw, {**environment, **defined})
        except EnvFileError as exc:
            raise EnvFileError(f"line {number} ({key}): {exc}") from None
    return defined


def _value(raw: str, lookup: Mapping[str, str]) -> str:
    if raw.startswith("'"):
        end = _closing_quote(raw, "'")
        return raw[1:end].replace("\\'", "'")
    if raw.startswith('"'):
        end = _closing_quote(raw, '"')
        body = re.sub(r"\\(.)", lambda m: _DOUBLE_QUOTE_ESCAPES.get(m.group(1), m.group(0)), raw[1:end])
        return interpolate(body, lookup)
    return interpolate(re.split(r"\s#", raw, maxsplit=1)[0].rstrip(), lookup)


def _closing_quote(raw: str, quote: str) -> int:
    position = 1
    while (position := raw.find(quote, position)) != -1:
        if raw[position - 1] != "\\":
            rest = raw[position + 1:].strip()
            if rest and not rest.startswith("#"):
                raise EnvFileError(f"text after the closing quote: {rest!r}")
            return position
        position += 1
    raise EnvFileError(f"no closing {quote}")


def interpolate(text: str, lookup: Mapping[str, str]) -> str:
    """``text`` with Compose's ``$`` expressions replaced; an unset plain ``${VAR}`` becomes ""."""
    return _interpolate_until(text, 0, lookup, stop=None)[0]


def _interpolate_until(text: str, position: int, lookup: Mapping[str, str],
                       stop: str | None) -> tuple[str, int]:
    """Interpolate from ``position`` up to an unmatched ``stop`` character (``}`` inside a default)."""
    out: list[str] = []
    while position < len(text):
        char = text[position]
        if char == stop:
            return "".join(out), position
        if char != "$":
            out.append(char)
            position += 1
            continue
        following = text[position + 1:position + 2]
        if following == "$":
            out.append("$")
            position += 2
        elif following == "{":
            value, position = _braced(text, position + 2, lookup)
            out.append(value)
        elif name := _NAME.match(text, position + 1):
            out.append(lookup.get(name.group(), ""))
            position = name.end()
        else:
            out.append("$")
            position += 1
    if stop is not None:
        raise EnvFileError(f"unclosed ${{ in {text!r}")
    return "".join(out), position


def _braced(text: str, position: int, lookup: Mapping[str, str]) -> tuple[str, int]:
    """The value of the ``${...}`` whose name starts at ``position``, and the index after its ``}``."""
    name = _NAME.match(text, position)
    if name is None:
        raise EnvFileError(f"bad variable name at {text[position:]!r}")
    position = name.end()
    operator = next((op for op in (":-", ":?", ":+", "-", "?", "+") if text.startswith(op, position)), "")
    if not operator:
        if text[position:position + 1] != "}":
            raise EnvFileError(f"unclosed ${{{name.group()} in {text!r}")
        return lookup.get(name.group(), ""), position + 1
    argument, end = _interpolate_until(text, position + len(operator), lookup, stop="}")
    value = lookup.get(name.group())
    unset = value is None or (operator.startswith(":") and value == "")
    if operator.endswith("-"):
        return (argument if unset else value), end + 1
    if operator.endswith("+"):
        return ("" if unset else argument), end + 1
    if unset:
        raise EnvFileError(f"{name.group()}: {argument or 'required variable is not set'}")
    return value, end + 1
