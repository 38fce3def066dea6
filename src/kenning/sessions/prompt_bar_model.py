"""The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.

Fitted by: .venv/bin/python bench/fit_prompt_bar.py --data bench/data/prompt_bar_train.jsonl.gz bench/data/prompt_bar_dev_split.jsonl.gz --balance --holdout bench/data/prompt_bar_holdout.jsonl.gz --write src/kenning/sessions/prompt_bar_model.py
Data: bench/data/prompt_bar_train.jsonl.gz (7590 candidates, 483 needed); bench/data/prompt_bar_dev_split.jsonl.gz (1044 candidates, 78 needed)
Logistic regression (L2, C=1.0, each source weighted as the largest); on the holdout: Brier 0.0301, log loss 0.1082, ECE 0.0163. Reliability:
    0.0-0.1: n= 4099  predicted=0.0152  observed=0.0095
    0.1-0.2: n=  197  predicted=0.1426  observed=0.1878
    0.2-0.3: n=   99  predicted=0.2504  observed=0.3131
    0.3-0.4: n=   62  predicted=0.3478  observed=0.4194
    0.4-0.5: n=   52  predicted=0.4441  observed=0.6538
    0.5-0.6: n=   46  predicted=0.552  observed=0.6957
    0.6-0.7: n=   31  predicted=0.6455  observed=0.8065
    0.7-0.8: n=   33  predicted=0.7553  observed=0.8485
    0.8-0.9: n=   41  predicted=0.8633  observed=0.9756
    0.9-1.0: n=   49  predicted=0.9268  observed=1.0
"""

INTERCEPT: float = -4.1983
WEIGHTS: dict[str, float] = {
    'bm25_rel': -0.18186,
    'has_bm25': -0.7623,
    'cosine': -0.07268,
    'cosine_gap': -0.70419,
    'both_legs': 0.64882,
    'rank_recip': -0.54189,
    'raw': -2.84447,
    'commit': -1.86488,
    'rule_type': 3.51619,
    'useful_before': -1.52583,
    'low_before': -3.73844,
    'mean_rating': 1.62634,
    'continuing': 0.0,
    'near_used': 2.65197,
    'near_shown': 1.2711,
    'covered': 1.14264,
    'first_prompt': -0.00513,
    'prompt_words': 3.69551,
    'same_project': -1.53435,
    'coverage': -1.54101,
    'ident_match': 0.95721,
    'distilled_coverage': 4.05916,
    'first_coverage': 5.5167,
    'distilled_bm25': 0.58677,
    'coverage_sq': -1.15599,
    'long_rank': 1.43016,
    'long_bm25': 1.29219,
    'long_rule': -3.73082,
    'long_commit': -1.86488,
}
