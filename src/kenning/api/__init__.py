"""kenning.api"""
