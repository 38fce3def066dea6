"""kenning.mcp"""
