"""Which files we parse, with which tree-sitter grammar, and which of them are tests.

Grammars come from the per-language wheels (pinned in pyproject), loaded once per process.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

import tree_sitter as ts

EXTENSIONS = {
    ".py": "python",
    ".js": "javascript", ".jsx": "jsx", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
}
JS_FAMILY = frozenset({"javascript", "jsx", "typescript", "tsx"})
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "testing"})
_JS_TEST = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")


def language_of(path: str) -> str | None:
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


def is_test_path(path: str, language: str) -> bool:
    p = PurePosixPath(path)
    name = p.name
    if language == "go":
        return name.endswith("_test.go")
    in_test_dir = any(part in _TEST_DIRS for part in p.parts[:-1])
    if language == "python":
        return in_test_dir or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    if language in JS_FAMILY:
        return in_test_dir or bool(_JS_TEST.search(name))
    return in_test_dir  # rust: integration tests live in tests/


@lru_cache(maxsize=None)
def grammar(language: str) -> ts.Language:
    if language == "python":
        import tree_sitter_python

        return ts.Language(tree_sitter_python.language())
    if language == "javascript":
        import tree_sitter_javascript

        return ts.Language(tree_sitter_javascript.language())
    if language in ("typescript", "tsx", "jsx"):  # JSX: the TSX grammar (the JavaScript wheel's JSX trips on attributes)
        import tree_sitter_typescript

        return ts.Language(tree_sitter_typescript.language_typescript() if language == "typescript"
                           else tree_sitter_typescript.language_tsx())
    if language == "go":
        import tree_sitter_go

        return ts.Language(tree_sitter_go.language())
    if language == "rust":
        import tree_sitter_rust

        return ts.Language(tree_sitter_rust.language())
    raise ValueError(f"no grammar for {language}")


@lru_cache(maxsize=None)
def parser(language: str) -> ts.Parser:
    return ts.Parser(grammar(language))


@lru_cache(maxsize=None)
def query(language: str, source: str) -> ts.Query:
    return ts.Query(grammar(language), source)
