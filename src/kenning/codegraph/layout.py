"""Per-repository facts extraction needs: Python package roots, the Go module path, Rust
crates; and the one function that turns a file's bytes into its module key and facts."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kenning.codegraph import lang_go, lang_js, lang_python, lang_rust
from kenning.codegraph.facts import FileFacts
from kenning.codegraph.languages import JS_FAMILY, is_test_path, language_of

_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_CARGO_NAME = re.compile(r"^\s*\[package\][^\[]*?^\s*name\s*=\s*\"([^\"]+)\"", re.MULTILINE | re.DOTALL)


@dataclass
class ParsedFile:
    path: str
    language: str
    module: str
    is_test: bool
    content_hash: str
    facts: FileFacts


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class Layout:
    root: Path
    packages: set[str] = field(default_factory=set)     # directories holding an __init__.py
    go_module: str | None = None
    _crates: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def scan(cls, root: Path, paths: list[str]) -> "Layout":
        layout = cls(root, {str(PurePosixPath(p).parent) for p in paths if p.endswith("__init__.py")})
        go_mod = root / "go.mod"
        if go_mod.is_file():
            match = _GO_MODULE.search(go_mod.read_text(encoding="utf-8", errors="replace"))
            layout.go_module = match.group(1) if match else None
        return layout

    def python_module(self, path: str) -> tuple[str, bool]:
        """Dotted module name: from the top of its package chain, or (outside regular packages,
        PEP 420 namespace style) from the repository root with a leading `src.` dropped."""
        p = PurePosixPath(path)
        is_package = p.name == "__init__.py"
        if str(p.parent) not in self.packages:
            parts = list(p.parent.parts) + [p.stem]
            if parts[0] == "src" and len(parts) > 1:
                parts = parts[1:]
            return ".".join(x for x in parts if x != "."), False
        parts = [] if is_package else [p.stem]
        parent = p.parent
        while str(parent) in self.packages and str(parent) != ".":
            parts.insert(0, parent.name)
            parent = parent.parent
        return ".".join(parts) or p.stem, is_package

    def crate_of(self, path: str) -> tuple[str, str]:
        """(crate name, crate directory) from the nearest Cargo.toml above `path`."""
        directory = str(PurePosixPath(path).parent)
        if directory in self._crates:
            return self._crates[directory]
        found = ("crate", "")
        probe = PurePosixPath(directory)
        while True:
            cargo = self.root / probe / "Cargo.toml"
            if cargo.is_file():
                match = _CARGO_NAME.search(cargo.read_text(encoding="utf-8", errors="replace"))
                name = (match.group(1) if match else probe.name or "crate").replace("-", "_")
                found = (name, "" if str(probe) == "." else str(probe))
                break
            if str(probe) in (".", ""):
                break
            probe = probe.parent
        self._crates[directory] = found
        return found

    def parse(self, path: str, data: bytes) -> ParsedFile:
        language = language_of(path)
        if language is None:
            raise ValueError(f"not a source file: {path}")
        if language == "python":
            module, is_package = self.python_module(path)
            facts = lang_python.extract(data, module, is_package)
        elif language in JS_FAMILY:
            module = lang_js.module_key(path)
            facts = lang_js.extract(data, language, path)
        elif language == "go":
            module = lang_go.module_key(path)
            facts = lang_go.extract(data, path, self.go_module)
        else:
            crate, crate_dir = self.crate_of(path)
            module = lang_rust.module_key(path, crate, crate_dir)
            facts = lang_rust.extract(data, module, crate)
        return ParsedFile(path, language, module, is_test_path(path, language), content_hash(data), facts)
