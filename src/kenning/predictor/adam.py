"""Adam in numpy over named arrays: the update `torch.optim.Adam(params, lr)` makes, without torch.

The fit process trains in numpy (`backprop.py`, issue 36). This is torch's single-tensor Adam with
its defaults — betas (0.9, 0.999), eps 1e-8, no weight decay, no amsgrad — in the same operations
and order (lerp for the first moment, mul then addcmul for the second, the bias corrections as
python floats), so it follows torch.optim.Adam on the same gradients to float32 rounding
(tests/predictor/test_predictor_adam.py). Like torch, a parameter without a gradient (None) is
skipped and keeps its own step count.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

import numpy as np


class Adam:
    def __init__(self, params: MutableMapping[str, np.ndarray], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params = params  # updated in place
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.exp_avg: dict[str, np.ndarray] = {}
        self.exp_avg_sq: dict[str, np.ndarray] = {}
        self.steps: dict[str, int] = {}

    def step(self, grads: Mapping[str, np.ndarray | None]) -> None:
        for name, p in self.params.items():
            grad = grads.get(name)
            if grad is None:
                continue
            grad = grad.astype(p.dtype, copy=False)
            if name not in self.steps:
                self.exp_avg[name] = np.zeros_like(p)
                self.exp_avg_sq[name] = np.zeros_like(p)
                self.steps[name] = 0
            self.steps[name] += 1
            step = float(self.steps[name])
            exp_avg, exp_avg_sq = self.exp_avg[name], self.exp_avg_sq[name]
            exp_avg += (grad - exp_avg) * (1 - self.beta1)  # lerp(grad, 1 - beta1)
            exp_avg_sq *= self.beta2
            exp_avg_sq += grad * grad * (1 - self.beta2)  # addcmul(grad, grad, 1 - beta2)
            step_size = self.lr / (1 - self.beta1 ** step)
            bias_correction2_sqrt = (1 - self.beta2 ** step) ** 0.5
            denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt
            denom += self.eps
            p -= exp_avg / denom * step_size  # addcdiv(exp_avg, denom, -step_size)
