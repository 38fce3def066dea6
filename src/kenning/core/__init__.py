"""kenning.core"""
