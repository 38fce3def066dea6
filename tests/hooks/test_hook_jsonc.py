"""The hook's JSON codec (hooks/jsonc.py, issue 36) gives what the json package gives, and loads no `re`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kenning.hooks import jsonc

VALUES = [
    {}, [], "", "plain", "ünïcödé ✓ \u2028 \x00 \"quoted\" back\\slash\n\ttab", 0, -1, 2**70, 1.5, -0.0, 1e300,
    float("inf"), float("-inf"), True, False, None,
    {"session_key": "s-1", "prompt": "how do we deploy?", "nested": {"list": [1, 2.5, None, {"x": ["y"]}]}},
    {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "<kenning-memory>\n- a\n"}},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_dumps_and_loads_match_the_json_package(value):
    assert jsonc.dumps(value) == json.dumps(value)
    text = json.dumps(value)
    assert repr(jsonc.loads(text)) == repr(json.loads(text))
    assert repr(jsonc.loads(f" \n{text}\t ".encode())) == repr(json.loads(text))


def test_nan_and_default():
    assert jsonc.dumps(float("nan")) == "NaN" and jsonc.loads("NaN") != jsonc.loads("NaN")
    marker = object()
    assert jsonc.dumps({"when": marker}, default=lambda o: "X") == json.dumps({"when": marker}, default=lambda o: "X")
    with pytest.raises(TypeError):
        jsonc.dumps({"when": marker})


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} trailing', "[1,]", '"unterminated', "nul", '{"a": "\x01"}',
                                  '"\\x"', "\xff"])
def test_what_is_not_json_raises_value_error_as_json_does(text):
    with pytest.raises(ValueError) as ours:
        jsonc.loads(text)
    with pytest.raises(ValueError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)


def test_the_codec_loads_neither_json_nor_re():
    probe = ("import sys; from kenning.hooks import jsonc; "
             "assert jsonc.loads(jsonc.dumps({'a': [1, 'b']})) == {'a': [1, 'b']}; "
             "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
