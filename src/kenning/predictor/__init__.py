"""kenning.predictor"""
