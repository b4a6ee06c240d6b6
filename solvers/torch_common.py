"""What the PyTorch solvers share: the device asked for, the data there, the original loss."""

from solvers.problem import Problem


def device_of(torch, device: str):
    return torch.device("cuda" if device == "gpu" else "cpu")


def data_on(torch, problem: Problem, place):
    """x and y as float32 tensors placed on the device once, at setup (PyTorch's default dtype, as TensorFlow's)."""
    return (torch.as_tensor(problem.x, dtype=torch.float32, device=place),
            torch.as_tensor(problem.y, dtype=torch.float32, device=place))


def original_loss(x, y, w, b):
    # The original's loss, sum((y - y_pred)^2 / n), so autograd differentiates the same expression.
    return (((y - (w * x + b)) ** 2) / x.shape[0]).sum()
