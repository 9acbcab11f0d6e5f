"""parse_json reads bytes with orjson where that gives exactly what the standard library gives:
the same values (types, key order, float bits) or the same quarantine reason, for every input."""

from __future__ import annotations

import json
import math
import random
import struct

import orjson
import pytest

from citeworth.core import io
from citeworth.core.io import JsonInputError, parse_json

RECORD = json.dumps({"paper_id": "12", "body_text": [{"text": "Café [1].", "cite_spans": [
    {"start": 5, "end": 8, "text": "[1]", "ref_id": "BIBREF0"}], "sec_num": None}], "year": 2019,
    "score": -0.25, "flags": [True, False, None], "emoji": "\U0001f600"}).encode()

INPUTS = [
    RECORD, RECORD + b"\n", RECORD + b"\r\n", b' \t{"a" : [ 1 , 2 ] }\r\n',
    b'{"a":1,"b":2,"a":3}',  # duplicate keys: the last value, in the first key's place
    b"-0", b"-0.0", b"1E+2", b"1e-2", b"2.4e-324", b"5e-324", b"1.7976931348623157e308",
    b"123456789012345678", b"-123456789012345678",  # 18 digits: int64 for orjson
    b"9223372036854775807", b"-9223372036854775808", b"18446744073709551615",  # its limits
    b"123456789012345678901234567890", b"-9223372036854775809", b"0.1234567890123456789012",
    b"1e400", b"-1e400", b"NaN", b"Infinity", b"-Infinity", b"[NaN]",  # what only the stdlib reads
    b'"\\ud83d\\ude00"', b'"\\u0000"', b'"\\/"', b'"\\u00e9"',
    b'"\\ud800"', b'"\\udc00"', b'"\\ud800\\u0041"', b'{"\\udbff":1}',  # lone surrogates
    b'"\xed\xa0\x80"', b'"\xff"', b'"\xf4\x90\x80\x80"', b"\xef\xbb\xbf{}",  # not UTF-8, a BOM
    b"[" * 1_100 + b"]" * 1_100, b"[" * 200_000,  # past orjson's nesting limit, past the stack
    b"[1,]", b'{"a":1,}', b"{'a':1}", b"01", b"-", b".5", b"1.", b"+1", b"0x1", b"[1 2]", b"[1]]",
    b"", b"\n", b"\x0c{}", b"{}\x0c", b"\xc2\xa0{}", b'"\t"', b'"a\x7fb"', b"tru", b"True",
]


def stdlib(data: bytes) -> tuple:
    """What parse_json gives without orjson: its standard-library path reads a str."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ("error", "invalid_utf8")
    return outcome(parse_json, text)


def outcome(parse, data) -> tuple:
    try:
        value = parse(data)
    except JsonInputError as exc:
        return ("error", exc.reason)
    return ("value", _exact(value))


def _exact(value):
    """The value with every type, key order and float bit pattern made visible."""
    if isinstance(value, dict):
        return ("dict", [(key, _exact(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [_exact(item) for item in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else struct.pack("<d", value))
    return (type(value).__name__, value)


@pytest.mark.parametrize("data", INPUTS, ids=[repr(data[:30]) for data in INPUTS])
def test_bytes_parse_exactly_as_the_standard_library_reads_them(data):
    assert outcome(parse_json, data) == stdlib(data)


def test_numbers_parse_exactly_as_the_standard_library_reads_them():
    rng = random.Random(7)
    numbers = [repr(x) for x in (struct.unpack("<d", rng.randbytes(8))[0] for _ in range(20_000))
               if math.isfinite(x)]
    numbers += [f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 17)}f}" for _ in range(20_000)]
    numbers += [str(rng.randint(-10**rng.randint(1, 25), 10**rng.randint(1, 25))) for _ in range(20_000)]
    data = ("[" + ",".join(numbers) + "]").encode()
    for chunk in range(0, len(numbers), 50):  # one number over 18 digits sends a whole line to the stdlib
        line = ("[" + ",".join(numbers[chunk:chunk + 50]) + "]").encode()
        assert outcome(parse_json, line) == stdlib(line)
    assert outcome(parse_json, data) == stdlib(data)


def test_ordinary_records_are_read_by_orjson(monkeypatch):
    calls, loads = [], orjson.loads
    monkeypatch.setattr(io.orjson, "loads", lambda data: calls.append(data) or loads(data))
    assert parse_json(RECORD) == json.loads(RECORD)
    parse_json(b"[12345678901234567890]")  # 20 digits: the standard library's reading only
    assert calls == [RECORD]
