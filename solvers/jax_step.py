"""JAX: one jitted step per Python iteration, the counterpart of one Session.run per step (dispatch is async)."""

from contextlib import contextmanager

from solvers.framework_common import jax_data, original_loss
from solvers.problem import Fit, Problem


@contextmanager
def prepare(problem: Problem, device: str):
    import jax

    place, x, y = jax_data(jax, problem, device)
    gradient = jax.grad(original_loss, argnums=(2, 3))
    lr = problem.lr

    @jax.jit
    def step(w, b):
        grad_w, grad_b = gradient(x, y, w, b)
        return w - lr * grad_w, b - lr * grad_b

    loss = jax.jit(lambda w, b: original_loss(x, y, w, b))
    zero = jax.device_put(x.dtype.type(0), place)

    def run(iterations: int) -> Fit:
        w = b = zero
        for _ in range(iterations):
            w, b = step(w, b)  # returns at once; the device works through the queue
        return Fit(w=float(w), b=float(b), loss=float(loss(w, b)), iterations=iterations)

    run(1)  # the trace and XLA compile: setup, not steady state
    yield run
