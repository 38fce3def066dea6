"""The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.

Fitted by: .venv/bin/python bench/fit_prompt_bar.py --data bench/data/prompt_bar_train.jsonl.gz --holdout bench/data/prompt_bar_holdout.jsonl.gz --write src/kenning/sessions/prompt_bar_model.py --out /tmp/32a/fit2.json
Data: bench/task_sim.py --dump-candidates runs (development worlds, sessions.ranking.prompt_min_probability 0): 7590 candidates, 483 needed.
Logistic regression (L2, C=1.0); on the holdout: Brier 0.0276, log loss 0.0967, ECE 0.0166. Reliability:
    0.0-0.1: n= 4152  predicted=0.0105  observed=0.0077
    0.1-0.2: n=  165  predicted=0.1426  observed=0.1758
    0.2-0.3: n=   79  predicted=0.2411  observed=0.3924
    0.3-0.4: n=   58  predicted=0.344  observed=0.6034
    0.4-0.5: n=   41  predicted=0.4513  observed=0.7073
    0.5-0.6: n=   45  predicted=0.5532  observed=0.7111
    0.6-0.7: n=   25  predicted=0.6514  observed=0.8
    0.7-0.8: n=   49  predicted=0.754  observed=0.8571
    0.8-0.9: n=   64  predicted=0.8541  observed=0.9375
    0.9-1.0: n=   31  predicted=0.9283  observed=1.0
"""

INTERCEPT: float = -6.79698
WEIGHTS: dict[str, float] = {
    'bm25_rel': 1.61396,
    'has_bm25': -0.02138,
    'cosine': 1.8194,
    'cosine_gap': -1.29638,
    'both_legs': 0.13259,
    'rank_recip': -0.81411,
    'raw': -4.83483,
    'commit': 0.0,
    'rule_type': 3.5616,
    'useful_before': -1.87802,
    'low_before': -3.62488,
    'mean_rating': 1.35384,
    'continuing': 0.0,
    'near_used': 3.06654,
    'near_shown': 4.33269,
    'covered': -3.67746,
    'first_prompt': 0.71223,
    'prompt_words': -3.1429,
    'same_project': -0.23125,
    'coverage': 5.13116,
    'ident_match': -0.07643,
}
