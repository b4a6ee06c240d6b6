"""What the TensorFlow 2, JAX and PyTorch solvers share: the device asked for, the data there, the original loss."""

from solvers.problem import Problem


def tf_data(tf, problem: Problem, device_spec: str):
    """x and y as float32 tensors placed on the device once, at setup."""
    with tf.device(device_spec):
        return tf.constant(problem.x, dtype=tf.float32), tf.constant(problem.y, dtype=tf.float32)


def tf_original_loss(tf, x, y, w, b):
    # The original's loss, sum((y - y_pred)^2 / n), so the tape differentiates the same expression.
    return tf.reduce_sum((y - (w * x + b)) ** 2 / x.shape[0])


def jax_data(jax, problem: Problem, device: str):
    """JAX's first device of that kind (the registry refused a gpu JAX does not see), and x and y as float32 arrays
    placed there once, at setup (JAX's default precision, as TensorFlow's)."""
    import jax.numpy as jnp

    place = jax.devices(device)[0]
    return (place, jax.device_put(jnp.asarray(problem.x, dtype=jnp.float32), place),
            jax.device_put(jnp.asarray(problem.y, dtype=jnp.float32), place))


def torch_data(torch, problem: Problem, device: str):
    """The torch.device, and x and y as float32 tensors placed there once, at setup (PyTorch's default, as TF's)."""
    place = torch.device("cuda" if device == "gpu" else "cpu")
    return (place, torch.as_tensor(problem.x, dtype=torch.float32, device=place),
            torch.as_tensor(problem.y, dtype=torch.float32, device=place))


def original_loss(x, y, w, b):
    # The original's loss, sum((y - y_pred)^2 / n), so jax.grad and autograd differentiate the same expression.
    return (((y - (w * x + b)) ** 2) / x.shape[0]).sum()
