"""PyTorch: the whole loop compiled by torch.compile, as one while_loop with the iteration count a tensor."""

from contextlib import contextmanager

from solvers.framework_common import original_loss, torch_data
from solvers.problem import Fit, Problem


def compiled_descend(torch, lr: float):
    from torch._higher_order_ops.while_loop import while_loop  # the loop torch.compile keeps as a loop

    def descend(x, y, iterations):
        n = x.shape[0]

        def more(i, w, b):
            return i < iterations

        def step(i, w, b):
            # The original loss's gradient written out: autograd does not run inside a compiled while_loop body.
            residual = y - (w * x + b)
            return i + 1, w + lr * 2.0 / n * (x * residual).sum(), b + lr * 2.0 / n * residual.sum()

        # Three distinct zeros: carried values that alias each other are refused.
        _, w, b = while_loop(more, step, (iterations.new_zeros(()), x.new_zeros(()), x.new_zeros(())))
        return w, b, original_loss(x, y, w, b)

    # Every compile is of this one descend, whatever the size and step: a process that prepares more than dynamo's
    # recompile limit (8) of them, as the tests do, would fail, and each call would check all the earlier ones' guards.
    # Cleared, each setup compiles once and its runs find one.
    torch.compiler.reset()
    return torch.compile(descend, fullgraph=True, dynamic=False)


@contextmanager
def prepare(problem: Problem, device: str):
    import torch

    place, x, y = torch_data(torch, problem, device)
    descend = compiled_descend(torch, problem.lr)

    def run(iterations: int) -> Fit:
        w, b, loss = descend(x, y, torch.tensor(iterations, device=place))
        return Fit(w=w.item(), b=b.item(), loss=loss.item(), iterations=iterations)  # item() waits for the device

    run(1)  # the trace and the compile: setup, not steady state
    yield run
