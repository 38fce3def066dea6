"""Each language's imports, definitions and calls on small real snippets, end to end through
the indexer into a real SQLite file."""

from __future__ import annotations

from kenning.codegraph.indexer import index_path

from .helpers import edges, fresh_db, nodes, write_tree

PYTHON = {
    "app/__init__.py": "from .store import save\n",
    "app/store.py": (
        "import json\n\n"
        "def save(obj):\n    return json.dumps(obj)\n\n"
        "class Repo:\n    def put(self, x):\n        return self.check(x) and save(x)\n"
        "    def check(self, x):\n        return bool(x)\n"
    ),
    "app/service.py": (
        "from app import save\nimport app.store as st\nfrom app.store import Repo\n\n"
        "class Special(Repo):\n    def put(self, x):\n        return super().put(x)\n\n"
        "def handle(x):\n    Repo().put(x)\n    st.save(x)\n    return save(x)\n"
    ),
    "tests/test_service.py": "from app.service import handle\n\ndef test_handle():\n    assert handle(1)\n",
}


def test_python_imports_defines_calls(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", PYTHON), "py")
    got = edges(db, "py")
    assert ("imports", "app/service.py:", "app/store.py:") in got
    assert ("imports", "app/service.py:", "app/__init__.py:") in got
    assert ("imports_symbol", "app/service.py:", "app/store.py:Repo") in got
    assert ("imports_symbol", "app/service.py:", "app/store.py:save") in got  # through the package re-export
    assert ("defines", "app/store.py:", "app/store.py:Repo") in got
    assert ("defines", "app/store.py:Repo", "app/store.py:Repo.put") in got
    assert ("calls", "app/store.py:Repo.put", "app/store.py:Repo.check") in got      # self.method
    assert ("calls", "app/store.py:Repo.put", "app/store.py:save") in got            # same module
    assert ("calls", "app/service.py:handle", "app/store.py:save") in got            # module alias + re-export
    assert ("calls", "app/service.py:handle", "app/store.py:Repo") in got            # constructor
    assert ("calls_external", "app/store.py:save", "json.dumps") in got
    assert ("extends", "app/service.py:Special", "app/store.py:Repo") in got
    assert ("tested_by", "app/service.py:handle", "tests/test_service.py:test_handle") in got
    assert ("method", "app/store.py", "Repo.check") in nodes(db, "py")


TYPESCRIPT = {
    "src/util.ts": "export function clamp(x: number) { return Math.min(x, 1); }\n"
                   "export default function fmt(x: number) { return String(clamp(x)); }\n",
    "src/shape.ts": "export interface Shape { area(): number }\n"
                    "export abstract class Base { describe() { return this.name(); } name() { return 'b'; } }\n"
                    "export type Id = string;\n",
    "src/square.ts": "import { Shape, Base } from './shape';\nimport fmt, { clamp as cl } from './util';\n"
                     "import * as u from './util';\n"
                     "export class Square extends Base implements Shape {\n"
                     "  area() { return cl(2) + u.clamp(3); }\n  label() { return fmt(this.area()); }\n}\n",
    "src/view.tsx": "import { Square } from './square';\n"
                    "export const View = () => { const s = new Square(); return <div>{s.label()}</div>; };\n",
    "src/square.test.ts": "import { Square } from './square';\ntest('area', () => { new Square().area(); });\n",
}


def test_typescript_and_tsx(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", TYPESCRIPT), "ts")
    got = edges(db, "ts")
    assert ("imports", "src/square.ts:", "src/shape.ts:") in got
    assert ("imports_symbol", "src/square.ts:", "src/util.ts:fmt") in got           # default import
    assert ("calls", "src/square.ts:Square.area", "src/util.ts:clamp") in got       # aliased named import
    assert ("calls", "src/square.ts:Square.label", "src/util.ts:fmt") in got
    assert ("calls", "src/square.ts:Square.label", "src/square.ts:Square.area") in got  # this.method
    assert ("extends", "src/square.ts:Square", "src/shape.ts:Base") in got
    assert ("implements", "src/square.ts:Square", "src/shape.ts:Shape") in got
    assert ("calls", "src/view.tsx:View", "src/square.ts:Square") in got            # new in TSX
    assert ("calls", "src/shape.ts:Base.describe", "src/shape.ts:Base.name") in got
    assert ("tested_by", "src/square.ts:Square", "src/square.test.ts:") in got
    found = nodes(db, "ts")
    assert {("interface", "src/shape.ts", "Shape"), ("type", "src/shape.ts", "Id"),
            ("function", "src/view.tsx", "View")} <= found


JAVASCRIPT = {
    "lib/math.js": "function add(a, b) { return a + b; }\nmodule.exports = { add };\n",
    "lib/calc.js": "const math = require('./math');\nimport { helper } from './helper.js';\n"
                   "class Calc { sum(a, b) { return math.add(a, b) + helper(); } }\nexport default Calc;\n",
    "lib/helper.js": "export function helper() { return 0; }\n",
}


def test_javascript_require_and_esm(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", JAVASCRIPT), "js")
    got = edges(db, "js")
    assert ("imports", "lib/calc.js:", "lib/math.js:") in got
    assert ("calls", "lib/calc.js:Calc.sum", "lib/math.js:add") in got
    assert ("calls", "lib/calc.js:Calc.sum", "lib/helper.js:helper") in got


GO = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "store/store.go": "package store\n\ntype Store struct{ Base }\n\n"
                      "func New() *Store { return &Store{} }\n\n"
                      "func (s *Store) Save(x int) error { return s.check(x) }\n\n"
                      "func (s *Store) check(x int) error { return nil }\n",
    "store/base.go": "package store\n\ntype Base struct{}\n\nfunc helper() int { return New() == nil }\n",
    "cmd/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/shop/store\"\n)\n\n"
                   "func main() {\n\ts := store.New()\n\tfmt.Println(s.Save(1))\n}\n",
    "store/store_test.go": "package store\n\nimport \"testing\"\n\nfunc TestSave(t *testing.T) { New().Save(1) }\n",
}


def test_go_packages_methods_and_tests(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", GO), "go")
    got = edges(db, "go")
    assert ("imports", "cmd/main.go:", "store/store.go:") in got
    assert ("calls", "cmd/main.go:main", "store/store.go:New") in got
    assert ("calls_external", "cmd/main.go:main", "fmt.Println") in got
    assert ("calls", "store/store.go:Store.Save", "store/store.go:Store.check") in got   # receiver
    assert ("calls", "store/base.go:helper", "store/store.go:New") in got               # same package
    assert ("extends", "store/store.go:Store", "store/base.go:Base") in got             # embedding
    assert ("tested_by", "store/store.go:New", "store/store_test.go:TestSave") in got


RUST = {
    "Cargo.toml": "[package]\nname = \"ledger-core\"\nversion = \"0.1.0\"\n",
    "src/lib.rs": "pub mod account;\npub mod util;\n\nuse crate::account::Account;\n\n"
                  "pub fn open() -> Account { Account::new(util::zero()) }\n",
    "src/account.rs": "use crate::util::zero;\n\npub trait Named { fn name(&self) -> String; }\n\n"
                      "pub struct Account { pub balance: i64 }\n\n"
                      "impl Account {\n    pub fn new(b: i64) -> Self { Account { balance: b + zero() } }\n"
                      "    pub fn reset(&mut self) { self.balance = Self::start(); self.touch(); }\n"
                      "    fn touch(&self) {}\n    fn start() -> i64 { 0 }\n}\n\n"
                      "impl Named for Account { fn name(&self) -> String { String::new() } }\n",
    "src/util.rs": "pub fn zero() -> i64 { 0 }\n",
    "tests/open.rs": "use ledger_core::open;\n\n#[test]\nfn opens() { open(); }\n",
}


def test_rust_modules_impls_and_uses(tmp_path):
    db = fresh_db(tmp_path)
    index_path(db, write_tree(tmp_path / "repo", RUST), "rs")
    got = edges(db, "rs")
    assert ("imports", "src/lib.rs:", "src/account.rs:") in got
    assert ("imports_symbol", "src/account.rs:", "src/util.rs:zero") in got
    assert ("calls", "src/lib.rs:open", "src/account.rs:Account.new") in got         # Type::new
    assert ("calls", "src/lib.rs:open", "src/util.rs:zero") in got                   # module path
    assert ("calls", "src/account.rs:Account.new", "src/util.rs:zero") in got        # use'd function
    assert ("calls", "src/account.rs:Account.reset", "src/account.rs:Account.touch") in got  # self.m
    assert ("implements", "src/account.rs:Account", "src/account.rs:Named") in got
    assert ("calls_external", "src/account.rs:Account.name", "String.new") in got
    assert ("tested_by", "src/lib.rs:open", "tests/open.rs:opens") in got
    assert ("interface", "src/account.rs", "Named") in nodes(db, "rs")
