"""JSON for the hook process on the C codec alone (issue 36): `json` itself costs every hook its
import of `re` (enum, functools, collections) and compiles its patterns, ~1.6 ms of CPU past what
the console script loads and ~6 ms when nothing has loaded `re` (a `python -P` entry, uv's scripts).

`dumps` and `loads` give what `json.dumps(obj, default=…)` and `json.loads(text)` give (the same C
encoder and scanner that `json` uses by default, with its default settings: ASCII output, ", " and
": " separators, NaN allowed). Where `_json` is missing (another Python), or on an error (the C
scanner imports json.decoder for its JSONDecodeError: only then), the `json` package does the work.
tests/connectors/test_hook_jsonc.py compares both on every kind of value.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a few ms of every hook's start
    from collections.abc import Callable

try:
    import _json
except ImportError:  # pragma: no cover - CPython has it
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"


class _ScanContext:
    """What the C scanner reads from `json.JSONDecoder` (its default settings)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # 'NaN', 'Infinity', '-Infinity'


def dumps(obj: object, default: Callable[[object], object] | None = None) -> str:
    """`json.dumps(obj, default=default)`."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, default=default)
    encode = _json.make_encoder(
        {}, default or _not_serializable, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True)
    return "".join(encode(obj, 0))


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def loads(text: str | bytes) -> object:
    """`json.loads(text)`; ValueError (json.JSONDecodeError) when it is not one JSON document."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if _json is not None:
        try:  # (typeshed types the context as a scanner; the C code reads these attributes of it)
            value, end = _json.make_scanner(_ScanContext)(text, start)  # type: ignore[arg-type]
        except StopIteration:
            pass  # not a value there: json reports where
        else:
            if not text[end:].strip(_WHITESPACE):
                return value
    import json  # the error path (and other Pythons): json's own message and position

    return json.loads(text)
