"""kenning.observer"""
