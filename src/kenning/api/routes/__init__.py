"""kenning.api.routes"""
