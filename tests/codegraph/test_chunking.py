"""AST chunking of source files: one definition per chunk with its path, symbol and lines,
and `ingest_document` using it for a source file (real service, real model)."""

from __future__ import annotations

from kenning.codegraph.chunking import chunk_code
from kenning.memory.documents import ingest_document, submit_document
from kenning.store import documents as doc_store

PY = '''"""Billing helpers."""
import math

RATE = 0.2


@cache
def tax(amount):
    return amount * RATE


class Invoice:
    """An invoice."""

    def total(self):
        return sum(self.lines)

    def rounded(self):
        return math.ceil(self.total())
'''


def test_python_chunks_follow_definitions():
    chunks = chunk_code("billing/tax.py", PY, size=2000)
    assert [c.symbol for c in chunks] == ["", "tax", "Invoice"]
    tax = chunks[1]
    assert tax.text.startswith("billing/tax.py:tax (lines 7-9)\n@cache\ndef tax(amount):")  # decorator kept
    assert chunks[0].text.splitlines()[1] == '"""Billing helpers."""'


def test_a_large_class_splits_into_its_methods():
    chunks = chunk_code("billing/tax.py", PY, size=60)
    symbols = [c.symbol for c in chunks]
    assert "Invoice.total" in symbols and "Invoice.rounded" in symbols and "Invoice" in symbols
    assert all(c.text.split(" (lines ")[0] in ("billing/tax.py", f"billing/tax.py:{c.symbol}") for c in chunks)


def test_other_languages_and_plain_text():
    ts = chunk_code("src/a.ts", "import { x } from './x';\nexport class A {\n  run() { return x(); }\n}\n"
                                "export const f = () => new A().run();\n")
    assert [c.symbol for c in ts] == ["", "A", "f"]  # the import line, then one chunk per definition
    go = chunk_code("main.go", "package main\n\nfunc (s *S) Run() {}\n\nfunc main() { helper() }\n")
    assert [c.symbol for c in go] == ["S.Run", "main"]
    rs = chunk_code("lib.rs", "pub struct S;\n\nimpl S {\n    pub fn new() -> Self { S }\n}\n")
    assert [c.symbol for c in rs] == ["S", "S.new"]
    assert chunk_code("notes.md", "# not code") == []


def test_ingesting_a_source_file_stores_one_memory_per_definition(kenning):
    cfg = kenning.settings.pipeline.documents.model_copy(update={"chunk_size": 400, "chunk_overlap": 40})
    doc_id = submit_document(kenning.db, text=PY, title="tax.py", project="billing", enqueue=False)
    result = ingest_document(kenning.writer, doc_id, cfg)
    assert result["chunks"] == 3
    contents = [kenning.get(c["memory_id"]).content for c in doc_store.document_chunks(kenning.db.reader(), doc_id)]
    assert contents[1].startswith("tax.py:tax (lines 7-9)") and "def rounded" in contents[2]
    hits = kenning.recall("Invoice rounded total ceil", limit=2, track_access=False)
    assert hits[0].memory.content.startswith("tax.py:Invoice")
