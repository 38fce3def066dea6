"""kenning.graph"""
