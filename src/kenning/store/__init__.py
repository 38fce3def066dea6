"""kenning.store"""
