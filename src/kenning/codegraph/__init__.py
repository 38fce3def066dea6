"""Code knowledge graph (SPEC S8, memory-system-v4 section 6, layer 1 + memory links).

tree-sitter parses Python, JavaScript, TypeScript/TSX, Go and Rust into facts (definitions,
imports, calls); `resolve` turns facts into edges between nodes (files, classes, functions,
methods, interfaces, types); `closure` keeps a depth-bounded reverse-dependency closure for
"what breaks if I change X"; `indexer` walks a repository incrementally by content hash.
All SQL lives in `kenning.store.codegraph`.
"""
