"""The NVIDIA driver here and the driver each CUDA build needs, read without importing any framework."""

import re
import shutil
import subprocess
from functools import cache

# The oldest driver that runs a build for each CUDA major version, through CUDA's minor-version compatibility: NVIDIA's
# table, https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (Table 1: CUDA 13.x
# >= 580, 12.x >= 525, 11.x >= 450). An older driver runs it only with NVIDIA's forward-compatibility package, which
# no wheel here brings.
MINIMUM_DRIVER = {11: 450, 12: 525, 13: 580}
PROC_VERSION = "/proc/driver/nvidia/version"
NO_DRIVER = "no NVIDIA driver here (no GPU from nvidia-smi, no /proc/driver/nvidia/version)"


@cache
def driver_version() -> str | None:
    """The NVIDIA driver's version, e.g. '570.86.15', as nvidia-smi or the kernel module gives it; None without one.

    perf/measure/gpu.py asks nvidia-smi too, but solvers/ imports nothing from perf/: the gate runs other revisions'
    solvers with this revision's perf/."""
    if shutil.which("nvidia-smi"):
        try:
            listing = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=10, check=True).stdout
        except (OSError, subprocess.SubprocessError):  # a driver that does not answer: the kernel module may
            listing = ""
        if found := re.search(r"^\s*(\d+\.\d+(?:\.\d+)?)\s*$", listing, re.MULTILINE):
            return found[1]
    try:
        with open(PROC_VERSION) as version:
            text = version.read()
    except OSError:
        return None
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Wed Jan ..." (or "Open Kernel Module for x86_64")
    found = re.search(r"Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)\s", text)
    return found[1] if found else None


def needed_driver(cuda: str) -> int | None:
    """The oldest driver (its major version) that runs a build for CUDA `cuda` ('13.0', '12'); None where not known."""
    try:
        return MINIMUM_DRIVER.get(int(cuda.split(".")[0]))
    except ValueError:
        return None


def too_old_reason(build: str, cuda: str) -> str | None:
    """Why the driver here cannot run `build`, made for CUDA `cuda`: there is none, or it is too old; None if it can."""
    driver = driver_version()
    if driver is None:
        return NO_DRIVER
    needed = needed_driver(cuda)
    if needed and int(driver.split(".")[0]) < needed:
        return f"the NVIDIA driver here is {driver}, and {build}, built for CUDA {cuda}, needs {needed} or later"
    return None
