"""The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.

Fitted by: .venv/bin/python bench/fit_prompt_bar.py --data bench/data/prompt_bar_train.jsonl.gz bench/data/prompt_bar_dev_split.jsonl.gz --balance --holdout bench/data/prompt_bar_holdout.jsonl.gz --set-data bench/data/prompt_bar_dev_split.jsonl.gz bench/data/prompt_bar_set_dev_split.jsonl.gz --write src/kenning/sessions/prompt_bar_model.py
Data: bench/data/prompt_bar_train.jsonl.gz (7590 candidates, 483 needed); bench/data/prompt_bar_dev_split.jsonl.gz (1044 candidates, 78 needed)
Logistic regression (L2, C=1.0, each source weighted as the largest); on the holdout: Brier 0.0338, log loss 0.122, ECE 0.0163. Reliability:
    0.0-0.1: n= 4068  predicted=0.0166  observed=0.0118
    0.1-0.2: n=  230  predicted=0.1461  observed=0.2087
    0.2-0.3: n=   76  predicted=0.2412  observed=0.1842
    0.3-0.4: n=   83  predicted=0.3471  observed=0.3494
    0.4-0.5: n=   62  predicted=0.4377  observed=0.6452
    0.5-0.6: n=   35  predicted=0.5504  observed=0.7714
    0.6-0.7: n=   40  predicted=0.6461  observed=0.8
    0.7-0.8: n=   21  predicted=0.7582  observed=0.8571
    0.8-0.9: n=   77  predicted=0.8509  observed=0.9351
    0.9-1.0: n=   17  predicted=0.9433  observed=0.7647

Set model (precise first prompts: P(the top k holds a needed memory) over log_k, p_any, agree), fitted on 58 pools x k = 1..8 (13 families) of bench/data/prompt_bar_dev_split.jsonl.gz, bench/data/prompt_bar_set_dev_split.jsonl.gz; share held at k: {1: 0.4483, 2: 0.6724, 3: 0.8621, 4: 0.9655, 5: 1.0, 6: 1.0, 7: 1.0, 8: 1.0}. Cross-validated by family: Brier 0.08, ECE 0.0295; the rule at 0.95 (k <= 5) holds a needed memory in 0.9655 of the pools, mean k 4.67. Reliability (cross-validated):
    0.0-0.1: n=    0  predicted=None  observed=None
    0.1-0.2: n=    0  predicted=None  observed=None
    0.2-0.3: n=    0  predicted=None  observed=None
    0.3-0.4: n=   35  predicted=0.3807  observed=0.4857
    0.4-0.5: n=   21  predicted=0.4116  observed=0.3333
    0.5-0.6: n=    2  predicted=0.5717  observed=1.0
    0.6-0.7: n=    0  predicted=None  observed=None
    0.7-0.8: n=   50  predicted=0.7662  observed=0.66
    0.8-0.9: n=   36  predicted=0.8829  observed=0.9444
    0.9-1.0: n=  320  predicted=0.9687  observed=0.9688
"""

INTERCEPT: float = -2.76976
WEIGHTS: dict[str, float] = {
    'bm25_rel': 0.22192,
    'has_bm25': -0.30461,
    'cosine': -0.79764,
    'cosine_gap': -1.15,
    'both_legs': 0.72931,
    'rank_recip': -1.28074,
    'raw': -2.81268,
    'commit': -1.91557,
    'rule_type': 3.17712,
    'useful_before': -2.12452,
    'low_before': -3.81859,
    'mean_rating': 1.88378,
    'continuing': 0.0,
    'near_used': 1.61448,
    'near_shown': 0.36801,
    'covered': 0.89458,
    'prompt_words': 2.16074,
    'same_project': -1.23348,
    'coverage': 0.614,
    'ident_match': 0.96223,
    'distilled_coverage': 5.50713,
    'distilled_bm25': -0.03176,
    'coverage_sq': -0.40844,
    'long_rank': 2.2505,
    'long_bm25': 1.8111,
    'long_rule': -3.67619,
    'long_commit': -1.91557,
}

# the set model of a precise first prompt (prompt_bar.set_probability): P(top k holds a needed one)
SET_INTERCEPT: float = 0.70796
SET_WEIGHTS: dict[str, float] = {
    'log_k': 2.38669,
    'p_any': -0.09674,
    'agree': -1.1244,
}
