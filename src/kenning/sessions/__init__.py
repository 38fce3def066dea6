"""kenning.sessions"""
