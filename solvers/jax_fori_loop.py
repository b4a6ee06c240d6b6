"""JAX: the whole loop in one jitted function (lax.fori_loop), gradients by jax.grad, the count an argument."""

from contextlib import contextmanager

from solvers.framework_common import jax_data, original_loss
from solvers.problem import Fit, Problem


@contextmanager
def prepare(problem: Problem, device: str):
    import jax

    _, x, y = jax_data(jax, problem, device)
    gradient = jax.grad(original_loss, argnums=(2, 3))
    lr = problem.lr

    @jax.jit
    def descend(x, y, iterations):
        def step(_, wb):
            grad_w, grad_b = gradient(x, y, *wb)
            return wb[0] - lr * grad_w, wb[1] - lr * grad_b

        # A traced count makes fori_loop a while_loop: one compile serves every iteration count.
        w, b = jax.lax.fori_loop(0, iterations, step, (x.dtype.type(0), x.dtype.type(0)))
        return w, b, original_loss(x, y, w, b)

    def run(iterations: int) -> Fit:
        w, b, loss = descend(x, y, iterations)
        return Fit(w=float(w), b=float(b), loss=float(loss), iterations=iterations)  # float() waits for the device

    run(1)  # the trace and XLA compile: setup, not steady state
    yield run
