"""The CLI's two backends — the daemon over HTTP and the local store — implement one typed Protocol
(`kenning.cli.backend.Backend`): every method with the Protocol's exact signature (names, kinds,
defaults, annotations), no `__getattr__` forwarding, and the commands call nothing else on them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import kenning.cli
from kenning.cli.backend import Backend, DaemonBackend, LocalBackend
from kenning.client import KenningClient

CLI = Path(kenning.cli.__file__).parent
OPENERS = {"backend", "memory_backend", "open_backend"}
LOCAL_ONLY = {("tokens.py", "kenning")}  # tokens live in this home's store: narrowed to LocalBackend first


def protocol_methods() -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in vars(Backend).items()
            if callable(member) and not name.startswith("_")}


def protocol_members() -> set[str]:
    return set(protocol_methods()) | set(Backend.__annotations__)


def test_the_protocol_covers_the_calls():
    assert {"remember", "recall", "get", "edit", "forget", "list", "export", "sessions", "entity",
            "pipeline_status", "predictor_train", "review_reject", "ingest_document", "ingest_git"} <= set(protocol_methods())
    assert "where" in Backend.__annotations__


@pytest.mark.parametrize("cls", [LocalBackend, DaemonBackend])
def test_each_backend_implements_every_method_with_the_protocol_signature(cls):
    assert "__getattr__" not in vars(cls)
    for name, expected in protocol_methods().items():
        impl = getattr(cls, name, None)
        assert callable(impl), f"{cls.__name__} lacks {name}"
        assert inspect.signature(impl) == expected, f"{cls.__name__}.{name}{inspect.signature(impl)} != {expected}"


def test_both_instances_satisfy_the_protocol(settings):
    local = LocalBackend(settings)
    daemon = DaemonBackend(KenningClient(settings.base_url))
    try:
        for backend in (local, daemon):
            assert isinstance(backend.where, str) and backend.where
            missing = [m for m in protocol_members() if not hasattr(backend, m)]
            assert missing == []
    finally:
        local.close()
        daemon.close()


def backend_uses(source: str) -> set[str]:
    """Attributes read on a backend in a CLI module: names bound by `with backend() as b` (or
    `memory_backend()`), and parameters annotated `Backend`."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in OPENERS
                        and isinstance(item.optional_vars, ast.Name)):
                    names.add(item.optional_vars.id)
        elif isinstance(node, ast.arg) and isinstance(node.annotation, ast.Name) and node.annotation.id == "Backend":
            names.add(node.arg)
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names}


def test_the_commands_call_only_protocol_members():
    members = protocol_members()
    used = {(path.name, attr) for path in sorted(CLI.glob("*.py")) if path.name != "backend.py"
            for attr in backend_uses(path.read_text(encoding="utf-8"))}
    assert {attr for _, attr in used} >= {"remember", "recall", "ingest_git", "review_accept", "predictor_audit"}
    assert sorted(u for u in used if u[1] not in members and u not in LOCAL_ONLY) == []


def test_the_use_scan_sees_an_attribute_outside_the_protocol():
    source = "def f(x: Backend):\n    x.client.request('GET', '/')\nwith backend() as b:\n    b.kenning.review\n"
    assert backend_uses(source) == {"client", "kenning"}
