"""kenning.retrieval"""
