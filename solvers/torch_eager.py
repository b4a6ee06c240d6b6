"""PyTorch eager: one autograd step per Python iteration, as a user writes it (loss.backward, optimizer.step)."""

from contextlib import contextmanager

from solvers.framework_common import original_loss, torch_data
from solvers.problem import Fit, Problem


@contextmanager
def prepare(problem: Problem, device: str):
    import torch

    place, x, y = torch_data(torch, problem, device)
    w = torch.zeros((), dtype=torch.float32, device=place, requires_grad=True)
    b = torch.zeros((), dtype=torch.float32, device=place, requires_grad=True)
    optimizer = torch.optim.SGD([w, b], lr=problem.lr)

    def run(iterations: int) -> Fit:
        with torch.no_grad():  # every round starts from w = b = 0
            w.zero_()
            b.zero_()
        for _ in range(iterations):
            optimizer.zero_grad()
            original_loss(x, y, w, b).backward()
            optimizer.step()
        with torch.no_grad():
            loss = original_loss(x, y, w, b)
        return Fit(w=w.item(), b=b.item(), loss=loss.item(), iterations=iterations)  # item() waits for the device

    yield run
