"""kenning.hooks"""
