"""kenning.pipeline"""
