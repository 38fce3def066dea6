"""kenning.providers"""
