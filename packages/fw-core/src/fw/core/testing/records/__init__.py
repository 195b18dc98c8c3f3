"""One module per op family; each calls `fw.core.testing.record(...)` per op."""
