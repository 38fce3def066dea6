"""The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.

Fitted by: .venv/bin/python bench/fit_prompt_bar.py --data bench/data/prompt_bar_train.jsonl.gz bench/data/prompt_bar_dev_split.jsonl.gz --balance --holdout bench/data/prompt_bar_holdout.jsonl.gz --write src/kenning/sessions/prompt_bar_model.py
Data: bench/data/prompt_bar_train.jsonl.gz (7590 candidates, 483 needed); bench/data/prompt_bar_dev_split.jsonl.gz (596 candidates, 110 needed)
Logistic regression (L2, C=1.0, each source weighted as the largest); on the holdout: Brier 0.0303, log loss 0.1083, ECE 0.0185. Reliability:
    0.0-0.1: n= 4134  predicted=0.0154  observed=0.0094
    0.1-0.2: n=  187  predicted=0.1427  observed=0.2246
    0.2-0.3: n=   81  predicted=0.2455  observed=0.3333
    0.3-0.4: n=   63  predicted=0.347  observed=0.4762
    0.4-0.5: n=   48  predicted=0.444  observed=0.7083
    0.5-0.6: n=   34  predicted=0.5409  observed=0.7059
    0.6-0.7: n=   40  predicted=0.6465  observed=0.725
    0.7-0.8: n=   22  predicted=0.7561  observed=0.8636
    0.8-0.9: n=   41  predicted=0.8452  observed=0.9268
    0.9-1.0: n=   59  predicted=0.9268  observed=1.0
"""

INTERCEPT: float = -6.41307
WEIGHTS: dict[str, float] = {
    'bm25_rel': -0.45242,
    'has_bm25': 2.22678,
    'cosine': 0.63951,
    'cosine_gap': -0.47046,
    'both_legs': -2.94723,
    'rank_recip': -0.14934,
    'raw': -5.34089,
    'commit': -2.10924,
    'rule_type': 3.39791,
    'useful_before': -1.62652,
    'low_before': -3.70927,
    'mean_rating': 1.84767,
    'continuing': 0.0,
    'near_used': 3.0302,
    'near_shown': 1.21993,
    'covered': 5.41539,
    'first_prompt': 0.09694,
    'prompt_words': 3.71306,
    'same_project': 0.29242,
    'coverage': -1.51232,
    'ident_match': 0.34311,
    'distilled_coverage': 5.13135,
    'first_coverage': 5.02819,
    'distilled_bm25': 1.45226,
    'coverage_sq': -2.01295,
    'long_rank': 0.38033,
    'long_bm25': 0.8391,
    'long_rule': -4.90812,
    'long_commit': -2.10924,
}
