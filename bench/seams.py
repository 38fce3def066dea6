"""How typed the seams are: `Any` in function signatures and `dict[str, Any]` per package.

    .venv/bin/python bench/seams.py [--src src/kenning] [--out PATH]

Prints JSON: per top-level package (a module directly under kenning/ counts as its own), the
number of `Any` in function signatures (parameter and return annotations, `*args`/`**kwargs`
included; `dict[str, Any]` counts its `Any` once), the number of `dict[str, Any]` anywhere in the
code, and the parameters without an annotation (`self` / `cls` excluded). Issue 25 reports these
before and after.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path


def _any_count(node: ast.AST | None) -> int:
    if node is None:
        return 0
    return sum(
        1
        for sub in ast.walk(node)
        if (isinstance(sub, ast.Name) and sub.id == "Any")
        or (isinstance(sub, ast.Attribute) and sub.attr == "Any")
        or (isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _string_any(sub.value))
    )


def _string_any(text: str) -> bool:
    """A string annotation (forward reference) naming Any."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(tree))


def _signature_stats(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        params.append(args.vararg)
    if args.kwarg:
        params.append(args.kwarg)
    anys = sum(_any_count(p.annotation) for p in params) + _any_count(fn.returns)
    unannotated = sum(1 for p in params if p.annotation is None and p.arg not in ("self", "cls"))
    return anys, unannotated


def package_of(path: Path, src: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".py") if rel.parts else "kenning"


def collect(src: Path) -> dict[str, dict[str, int]]:
    any_sig: Counter[str] = Counter()
    dict_any: Counter[str] = Counter()
    unannotated: Counter[str] = Counter()
    for path in sorted(src.rglob("*.py")):
        pkg = package_of(path, src)
        text = path.read_text(encoding="utf-8")
        dict_any[pkg] += text.count("dict[str, Any]") + text.count("Dict[str, Any]")
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                anys, bare = _signature_stats(node)
                any_sig[pkg] += anys
                unannotated[pkg] += bare
    packages = sorted(set(any_sig) | set(dict_any) | set(unannotated))
    return {
        pkg: {
            "any_in_signatures": any_sig[pkg],
            "dict_str_any": dict_any[pkg],
            "unannotated_params": unannotated[pkg],
        }
        for pkg in packages
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src" / "kenning")
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    per_package = collect(opts.src)
    totals = {
        key: sum(row[key] for row in per_package.values())
        for key in ("any_in_signatures", "dict_str_any", "unannotated_params")
    }
    report = {"src": str(opts.src), "totals": totals, "packages": per_package}
    text = json.dumps(report, indent=2)
    if opts.out:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
