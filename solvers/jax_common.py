"""What the JAX solvers share: the device asked for, the data there, the original loss."""

from solvers.problem import Problem


def device_of(jax, device: str):
    """JAX's first device of that kind; the registry has already refused a gpu that JAX does not see."""
    return jax.devices("gpu" if device == "gpu" else "cpu")[0]


def data_on(jax, problem: Problem, device):
    """x and y as float32 arrays placed on the device once, at setup (JAX's default precision, as TensorFlow's)."""
    import jax.numpy as jnp

    return (jax.device_put(jnp.asarray(problem.x, dtype=jnp.float32), device),
            jax.device_put(jnp.asarray(problem.y, dtype=jnp.float32), device))


def original_loss(x, y, w, b):
    # The original's loss, sum((y - y_pred)^2 / n), so jax.grad differentiates the same expression.
    return (((y - (w * x + b)) ** 2) / x.shape[0]).sum()
