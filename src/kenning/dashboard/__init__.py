"""kenning.dashboard"""
