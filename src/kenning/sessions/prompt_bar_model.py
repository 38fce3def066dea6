"""The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.

Fitted by: .venv/bin/python bench/fit_prompt_bar.py --data bench/data/prompt_bar_train.jsonl.gz --holdout bench/data/prompt_bar_holdout.jsonl.gz --write src/kenning/sessions/prompt_bar_model.py
Data: bench/task_sim.py --dump-candidates runs (development worlds, sessions.ranking.prompt_min_probability 0): 7590 candidates, 483 needed.
Logistic regression (L2, C=1.0); on the holdout: Brier 0.0252, log loss 0.0877, ECE 0.0159. Reliability:
    0.0-0.1: n= 4160  predicted=0.0093  observed=0.0065
    0.1-0.2: n=  159  predicted=0.141  observed=0.1509
    0.2-0.3: n=   78  predicted=0.2373  observed=0.4487
    0.3-0.4: n=   40  predicted=0.3457  observed=0.65
    0.4-0.5: n=   48  predicted=0.4516  observed=0.7292
    0.5-0.6: n=   41  predicted=0.5389  observed=0.6829
    0.6-0.7: n=   29  predicted=0.6533  observed=0.7586
    0.7-0.8: n=   46  predicted=0.7529  observed=0.8043
    0.8-0.9: n=   34  predicted=0.8596  observed=0.9706
    0.9-1.0: n=   74  predicted=0.9422  observed=1.0
"""

INTERCEPT: float = -6.44135
WEIGHTS: dict[str, float] = {
    'bm25_rel': -0.89793,
    'has_bm25': -0.20972,
    'cosine': 1.08016,
    'cosine_gap': -0.54843,
    'both_legs': 0.03315,
    'rank_recip': -0.99901,
    'raw': -3.2899,
    'commit': 0.0,
    'rule_type': 3.98137,
    'useful_before': -1.7631,
    'low_before': -3.69203,
    'mean_rating': 1.47543,
    'continuing': 0.0,
    'near_used': 4.30196,
    'near_shown': 3.98295,
    'covered': -2.48811,
    'first_prompt': -0.57584,
    'prompt_words': -2.68319,
    'same_project': -0.39422,
    'coverage': -0.06881,
    'ident_match': 0.87136,
    'distilled_coverage': 2.86586,
    'first_coverage': 5.22977,
    'distilled_bm25': 2.14589,
    'coverage_sq': 1.67483,
}
