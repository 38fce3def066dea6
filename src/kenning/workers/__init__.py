"""kenning.workers"""
