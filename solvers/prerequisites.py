"""What the GPU benchmarks of the named solvers need, checked before anything is timed: one line each, exit 1 if any lacks."""

import argparse
import sys

import solvers
from solvers import nvidia, packages, tensorflow_support


def build(package: str) -> str:
    """The framework's version and build, with the driver its CUDA needs; only where it imports."""
    if package == "jax":
        import jax

        plugins = packages.jax_cuda_plugins()
        cuda = plugins[0] if plugins else None
        return f"jax {jax.__version__}, " + (f"jax-cuda{cuda}-plugin, {cuda_build(cuda)}" if cuda else "CPU build")
    if package == "torch":
        import torch

        return f"torch {torch.__version__}, {cuda_build(torch.version.cuda)}"
    if package == "tensorflow":
        tf = tensorflow_support.import_tensorflow()
        return f"tensorflow {tf.__version__}, {cuda_build(tf.sysconfig.get_build_info().get('cuda_version'))}"
    return package


def cuda_build(cuda: str | None) -> str:
    if not cuda:
        return "CPU build"
    needed = nvidia.needed_driver(cuda)
    return f"CUDA {cuda} build" + (f" (needs driver {needed} or later)" if needed else "")


def checked(check) -> str | None:
    """check()'s reason; a check that fails itself is a reason too, said in one line rather than a traceback."""
    try:
        return check()
    except Exception as error:
        return f"could not tell: {type(error).__name__}: {packages.one_line(error)}"


def report(names: list[str]) -> tuple[list[str], list[str]]:
    """(the lines to print, what is not ready) for the GPU benchmarks of the solvers named."""
    on_gpu = [solvers.get(name) for name in names if "gpu" in solvers.get(name).devices]
    needed = sorted({package for solver in on_gpu for package in solver.needs},
                    key=lambda package: (packages.GPU_FRAMEWORKS.index(package) if package in packages.GPU_FRAMEWORKS
                                         else len(packages.GPU_FRAMEWORKS), package))
    driver = nvidia.driver_version()
    checks = []  # (what is checked, why it is not ready or None, its name in the NOT READY line)
    for package in needed:
        reason = checked(lambda: packages.unavailable_reason(package) or packages.gpu_unavailable_reason(package))
        # Its version and build where it imports: "torch 2.13.0, CUDA 13.0 build (needs driver 580 or later)".
        described = package if packages.unavailable_reason(package) else checked(lambda: build(package))
        checks.append((described, reason, package))
    users = {need: [solver.name for solver in on_gpu if need in solver.gpu_needs]
             for solver in on_gpu for need in solver.gpu_needs}
    checks += [(f"{need} (for {', '.join(names)} on gpu)", checked(lambda: packages.gpu_need_reason(need)),
                f"{need} ({', '.join(names)})") for need, names in users.items()]
    lines = [f"driver: {driver}" if driver else f"driver: none: {nvidia.NO_DRIVER}"]
    lines += [f"{described}: " + (f"NOT READY: {reason}" if reason else "ready") for described, reason, _ in checks]
    return lines, [name for _, reason, name in checks if reason]


def solver_names(text: str) -> list[str]:
    try:
        return [solvers.get(name).name for name in text.split(",") if name]
    except KeyError as unknown:
        raise argparse.ArgumentTypeError(unknown.args[0]) from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solvers.prerequisites", description=__doc__)
    parser.add_argument("--solvers", type=solver_names, default=list(solvers.REGISTRY), metavar="NAME,NAME",
                        help="the solvers whose GPU benchmarks are to run (default: all; cpu-only ones are passed over)")
    names = parser.parse_args(argv).solvers
    lines, not_ready = report(names)
    print("\n".join(lines))
    print(f"NOT READY: {', '.join(not_ready)} (the lines above say why)" if not_ready
          else "ready: everything the GPU benchmarks of these solvers need is here")
    return 1 if not_ready else 0


if __name__ == "__main__":
    sys.exit(main())
