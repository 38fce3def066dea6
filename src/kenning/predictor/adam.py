"""Adam, written out: the update `torch.optim.Adam(params, lr)` makes on CPU, without torch.optim.

torch.optim's first `step()` imports `torch._dynamo` (~70 MB of the fit process's memory, issue 36)
for an update of four tensor operations a parameter. This is torch's single-tensor path (the one it
takes for CPU tensors) with its defaults — betas (0.9, 0.999), eps 1e-8, no weight decay, no amsgrad —
in the same operations and order, so a fit gives the same weights as before, bit for bit
(tests/predictor/test_predictor_adam.py). Like torch, a parameter without a gradient is skipped and
keeps its own step count.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor


class Adam:
    def __init__(self, params: Iterable[Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params = list(params)
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.exp_avg: dict[int, Tensor] = {}
        self.exp_avg_sq: dict[int, Tensor] = {}
        self.steps: dict[int, int] = {}

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        for i, p in enumerate(self.params):
            grad = p.grad
            if grad is None:
                continue
            if i not in self.steps:
                self.exp_avg[i] = torch.zeros_like(p, memory_format=torch.preserve_format)
                self.exp_avg_sq[i] = torch.zeros_like(p, memory_format=torch.preserve_format)
                self.steps[i] = 0
            self.steps[i] += 1
            step = float(self.steps[i])  # torch keeps the step as a float tensor and reads it as a float
            exp_avg, exp_avg_sq = self.exp_avg[i], self.exp_avg_sq[i]
            exp_avg.lerp_(grad, 1 - self.beta1)
            exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
            step_size = self.lr / (1 - self.beta1 ** step)
            bias_correction2_sqrt = (1 - self.beta2 ** step) ** 0.5
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(self.eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)
