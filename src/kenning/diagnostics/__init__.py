"""kenning.diagnostics"""
