"""kenning.memory"""
