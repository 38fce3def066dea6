"""The scorer seed's hardcoded defaults (not user-configurable in V1), in one place."""

from dataclasses import dataclass

INTERNAL_DIM = 64  # d: the shared representation width
HASH_BUCKETS = 16_384  # hash-trick buckets; fixed so base weights transfer between users
PROJECT_SLOTS = 32  # project embedding table rows
VALUE_DIM = 32  # V projection width (feeds the gate)
# Dropout on the candidates' d-dim encodings (before K and V), in training only. Without it
# the content path memorised which memories were useful (training loss 0.04, canary NDCG 0.9+)
# and the gate left the history features near 0 (weights 0.01-0.09 against 0.65 for
# attention); after a task switch or a drift that memory is stale. Measured in
# bench/predictor_sim, three seeds per arm (issue 11's note): dropping whole sessions' content
# instead, or the context's encoding too, did worse in the arms with less feedback.
CANDIDATE_DROPOUT = 0.5
N_FEATURES = 19  # see features.FEATURE_NAMES (12 base + 7 history)
# The gate's starting weights on the 5 history features (days since positive feedback, days
# since FTS hit, feedback mean, useful in the previous session, co-use): "what the last session
# of this project used is wanted again", as Q = K = I starts attention at "similar to the
# context". Training moves them; without a prior a first training's few steps left them near 0
# and the model ranked by embeddings alone. Measured offline on bench/predictor_sim data
# (session-start P@12, baseline 0.49): no prior 0.40; all five (-1.5, -0.5, 1.5, 2, 1.5) 0.51
# but LoCoMo protocol B fused fell under its baseline ("answered an earlier question" is no
# reason to answer this one); continuity only (useful last session, co-use) 0.54.
HISTORY_PRIOR = (0.0, 0.0, 0.0, 2.0, 1.5, 1.0, 1.0)  # + last rating, useful in the recent sessions (issue 32)

EMA_ALPHA = 0.1  # success-rate smoothing
DRIFT_RESET_THRESHOLD = 0.3  # success rate below which a session counts toward drift
DRIFT_RESET_EMA = 0.5  # success rate after a drift reset (neutral)
REPLAY_BUFFER_SIZE = 20  # top historical sessions (by continuity score) mixed into training
REPLAY_FRACTION = 0.2  # share of each training batch drawn from the replay buffer
# Recent sessions weigh 0.5 ** (age / half-life) in the loss, age = sessions newer than it among
# those loaded (the seed's "80 % recent": after a drift the new sessions must outweigh the old
# ones before the window fills with them; replay keeps weight 1).
RECENCY_HALF_LIFE_SESSIONS = 25.0
MIN_SCORER_CONFIDENCE = 0.6  # continuity confidence gate (training and EMA)
LOSS_TEMPERATURE = 0.5  # ListNet softmax temperature
LOW_VARIANCE_TEMPERATURE = 0.3  # sharper temperature when labels are within 0.1 of each other
LOW_VARIANCE_SPREAD = 0.1  # label spread under which the sharper temperature applies
SKIP_SPREAD = 0.02  # label spread under which a session carries no ordering signal: skipped
NEGATIVE_SIMILARITY_THRESHOLD = 0.6  # cosine above which a non-injected memory is a soft negative
SOFT_NEGATIVE_LABEL = 0.25
MAX_PROJECT_SLICES = 5  # per-project EMA slices kept
EARLY_ACTIVE_FLOORS = ((10, 0.8), (20, 0.6))  # (sessions since cold-start exit <, alpha floor)
LOSS_STREAK_FALLBACK = 3  # comparisons lost in a row after which alpha is 1.0 until a win or new weights (alpha.py)
COLD_START_WINDOW = 10  # comparisons considered by the cold-start exit rule
COLD_START_MIN_SUCCESS = 0.4  # success over that window needed to exit cold start
NDCG_K = 10
CANDIDATE_POOL_SIZE = 100

TRAIN_TIME_CAP_S = 30.0  # hard cap on one training run
# A training run that comes due (every N sessions, a drift reset) waits until the agents' burst is over
# (core.activity.BURST_OVER_S), at most TRAIN_DEFER_MAX_S: its fit process takes a core and ~250 MB at
# a million memories, which a burst of agents should not share (trainer.py). A manual run starts at once.
TRAIN_DEFER_MAX_S = 900.0
TRAIN_EPOCHS = 12
TRAIN_LR = 3e-3
TRAIN_BATCH_SESSIONS = 16
TRAIN_LIMIT_SESSIONS = 500  # most recent eligible sessions loaded per run
CANARY_SIZE = 25
CANARY_REFRESH_DAYS = 7
GATE_TOPK = 5
GATE_MIN_TOPK_OVERLAP = 0.6
GATE_MAX_NDCG_DROP = 0.15
# top-5 churn on the canary is waived unless the canary NDCG fell by more than this
GATE_WAIVE_NDCG_TOLERANCE = 0.02

HANG_RESTART_AFTER = 2  # consecutive score timeouts treated as a hung sidecar
GARBAGE_RESTART_AFTER = 3  # consecutive unparseable lines treated as a broken sidecar
CRASH_WINDOW_S = 3600.0
RESTART_BACKOFF_S = (0.5, 30.0)  # first delay, cap (doubles per crash)
CALIBRATION_MAE_THRESHOLD = 0.2

# team-draft interleaving (interleave.py, issue 32): places beyond what the baseline alone would show
# at session start that the draft may fill while the predictor has no influence (alpha = 1); once it
# has, the draft fills the whole limit
INTERLEAVE_EXTRA_SLOTS = 2


@dataclass
class TrainConfig:
    """One training run's settings (train.train's; a fit process's job carries them). Here, not in
    train.py, so the sidecar builds a job without importing torch."""

    epochs: int = TRAIN_EPOCHS
    lr: float = TRAIN_LR
    batch_sessions: int = TRAIN_BATCH_SESSIONS
    time_cap_s: float = TRAIN_TIME_CAP_S
    replay_fraction: float = REPLAY_FRACTION
    seed: int = 0
