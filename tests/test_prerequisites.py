"""What cannot run on a GPU, said before timing (solvers/packages.py, solvers/nvidia.py, solvers/prerequisites.py): each
reason, on the CPU, with the driver, PyTorch, JAX, the compiler, Python's headers and ldconfig faked."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from helpers import ROOT

import solvers
from solvers import nvidia, packages, prerequisites

TORCH_GPU_REASON = packages.torch_gpu_reason  # the real one, where a test put a fake in its place
NO_PLUGIN = {"fssgd_test_jax_cuda12_plugin": "12", "fssgd_test_jax_cuda13_plugin": "13"}


@pytest.fixture
def driver(monkeypatch):
    """driver(version): the NVIDIA driver nvidia.driver_version() reports; None for none."""
    return lambda version: monkeypatch.setattr(nvidia, "driver_version", lambda: version)


@pytest.fixture
def alone(monkeypatch):
    """No other GPU framework loaded in this process, as in the worker that times a framework's solvers: each is asked
    here, not in a process of its own."""
    for framework in packages.GPU_FRAMEWORKS:
        monkeypatch.delitem(sys.modules, framework, raising=False)


@pytest.fixture
def fake_torch(monkeypatch, alone):
    """fake_torch(cuda=..., available=..., init_error=...): a torch module, put where `import torch` finds it."""
    def make(cuda="13.0", available=True, init_error=None, version="2.13.0"):
        def init():
            if init_error:
                raise init_error

        torch = SimpleNamespace(__version__=version, version=SimpleNamespace(cuda=cuda),
                                cuda=SimpleNamespace(is_available=lambda: available, init=init))
        monkeypatch.setitem(sys.modules, "torch", torch)
        return torch

    return make


@pytest.fixture
def fake_jax(monkeypatch, tmp_path, alone):
    """fake_jax(plugins=("12",), errors={"gpu": ..., "cuda": ...}): a jax module whose devices(kind) raises errors[kind],
    with those CUDA plugins installed (fake modules on sys.path); PyTorch not imported."""
    monkeypatch.setattr(packages, "JAX_CUDA_PLUGINS", NO_PLUGIN)

    def make(plugins=("12",), errors=None, version="0.10.2"):
        for module, cuda in NO_PLUGIN.items():
            if cuda in plugins:
                (tmp_path / f"{module}.py").write_text("")
            else:
                (tmp_path / f"{module}.py").unlink(missing_ok=True)
        monkeypatch.syspath_prepend(tmp_path)  # which also forgets what the import system found there before

        def devices(kind):
            if error := (errors or {}).get(kind):
                raise error
            return [SimpleNamespace(device_kind="NVIDIA H100 80GB HBM3")]

        jax = SimpleNamespace(__version__=version, devices=devices)
        monkeypatch.setitem(sys.modules, "jax", jax)
        return jax

    return make


# The driver ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("package", ["torch", "jax"])
def test_without_a_driver_it_says_so_without_importing_the_framework(driver, monkeypatch, package):
    driver(None)
    monkeypatch.setitem(sys.modules, package, None)  # importing it now raises ImportError
    assert packages.gpu_unavailable_reason(package) == nvidia.NO_DRIVER


@pytest.fixture
def fresh_driver_lookup():
    nvidia.driver_version.cache_clear()
    yield
    nvidia.driver_version.cache_clear()


def executable(path, text: str):
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_driver_version_is_nvidia_smis_else_the_kernel_modules(tmp_path, monkeypatch, fresh_driver_lookup):
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    executable(bin_folder / "nvidia-smi", "#!/bin/sh\nprintf '570.86.15\\n570.86.15\\n'\n")
    monkeypatch.setenv("PATH", str(bin_folder))
    monkeypatch.setattr(nvidia, "PROC_VERSION", str(tmp_path / "no-such-file"))
    assert nvidia.driver_version() == "570.86.15"

    nvidia.driver_version.cache_clear()
    executable(bin_folder / "nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver to talk to'\nexit 9\n")
    proc = tmp_path / "version"
    proc.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
                    "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\nGCC version:  gcc version 12.2.0\n")
    monkeypatch.setattr(nvidia, "PROC_VERSION", str(proc))
    assert nvidia.driver_version() == "580.65.06"

    nvidia.driver_version.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(nvidia, "PROC_VERSION", str(tmp_path / "no-such-file"))
    assert nvidia.driver_version() is None


@pytest.mark.parametrize("cuda, needed", [("13.0", 580), ("12.8", 525), ("12", 525), ("11.8", 450), ("10.2", None),
                                          ("", None)])
def test_the_driver_each_cuda_build_needs_is_nvidias_minimum_for_its_major_version(cuda, needed):
    assert nvidia.needed_driver(cuda) == needed


# PyTorch ---------------------------------------------------------------------------------------------------

def test_torchs_cpu_build_is_named_with_how_to_install_the_cuda_one(driver, fake_torch):
    driver("580.65.06")
    fake_torch(cuda=None, version="2.13.0+cpu")
    assert packages.gpu_unavailable_reason("torch") == (
        "torch 2.13.0+cpu is the CPU build (torch.version.cuda is None); for a GPU, install PyPI's CUDA build: "
        "pip install -e '.[torch]' without PyTorch's CPU index (docs/gpu.md)")


def test_a_driver_too_old_for_torchs_cuda_says_which_driver_and_which_it_needs(driver, fake_torch):
    driver("570.86.15")
    fake_torch(cuda="13.0")
    assert packages.gpu_unavailable_reason("torch") == (
        "the NVIDIA driver here is 570.86.15, and torch 2.13.0, built for CUDA 13.0, needs 580 or later")
    fake_torch(cuda="12.8")  # 570 runs every CUDA 12 build
    assert packages.gpu_unavailable_reason("torch") is None


def test_torchs_own_cuda_error_is_the_reason_where_it_sees_no_gpu(driver, fake_torch):
    driver("580.65.06")
    fake_torch(available=False, init_error=RuntimeError("No CUDA GPUs are available\n  (CUDA_VISIBLE_DEVICES)"))
    assert packages.gpu_unavailable_reason("torch") == (
        "PyTorch's CUDA failed to start: No CUDA GPUs are available (CUDA_VISIBLE_DEVICES)")
    fake_torch(available=False)
    assert packages.gpu_unavailable_reason("torch") == "no GPU visible to PyTorch"


# JAX -------------------------------------------------------------------------------------------------------

UNKNOWN_GPU = RuntimeError("Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
                           "Platforms present are: cpu")
CUDNN = ("Found cuDNN version 90100, but JAX was built against version 90800, which is newer. The copy of cuDNN that "
         "is installed must be at least as new as the version against which JAX was built.")


def test_jaxs_cpu_build_names_the_missing_plugin(driver, fake_jax):
    driver("580.65.06")
    fake_jax(plugins=())
    assert packages.gpu_unavailable_reason("jax") == (
        "jax here is the CPU build (neither jax-cuda12-plugin nor jax-cuda13-plugin is installed); install the "
        "jax-cuda extra (pip install -e '.[jax-cuda]')")


def test_a_driver_too_old_for_jaxs_cuda_plugin_says_which_driver_and_which_it_needs(driver, fake_jax):
    driver("520.61.05")
    fake_jax(plugins=("12",))
    assert packages.gpu_unavailable_reason("jax") == (
        "the NVIDIA driver here is 520.61.05, and jax 0.10.2 with jax-cuda12-plugin, built for CUDA 12, needs 525 or "
        "later")
    driver("570.86.15")
    fake_jax(plugins=("13",))
    assert packages.gpu_unavailable_reason("jax").endswith("jax-cuda13-plugin, built for CUDA 13, needs 580 or later")


def test_jaxs_cuda_backend_that_failed_to_start_is_told_apart_from_no_gpu(driver, fake_jax, monkeypatch):
    driver("580.65.06")
    failed = RuntimeError(f"Backend 'cuda' failed to initialize: {CUDNN}. Available backends are ['cpu']")
    fake_jax(errors={"gpu": UNKNOWN_GPU, "cuda": failed})
    assert packages.gpu_unavailable_reason("jax") == f"JAX's CUDA backend failed to start: {CUDNN}"


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """What a fresh Python process started from here finds, whatever this host has: NVIDIA driver 580.65.06 (an
    nvidia-smi on PATH), and a stand-in JAX with a CUDA 12 plugin that sees no GPU (on PYTHONPATH)."""
    folder = tmp_path / "fresh"
    folder.mkdir()
    executable(folder / "nvidia-smi", "#!/bin/sh\necho 580.65.06\n")
    (folder / "jax_cuda12_plugin.py").write_text("")
    (folder / "jax.py").write_text(f"__version__ = '0.0.0+stand-in'\n\ndef devices(kind):\n"
                                   f"    raise RuntimeError({str(UNKNOWN_GPU)!r})\n")
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.environ["PATH"]]))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    packages.asked_alone.cache_clear()
    yield
    packages.asked_alone.cache_clear()


@pytest.mark.parametrize("first", ["torch", "tensorflow"])
def test_where_another_framework_is_loaded_a_fresh_process_that_imports_this_one_alone_answers(driver, fake_jax,
                                                                                             monkeypatch, first,
                                                                                             fresh_machine):
    """As in the pytest process, which asks for every selected solver: PyTorch loaded first would leave JAX unable to
    start its CUDA backend here, where its own worker could."""
    driver("580.65.06")
    fake_jax()  # here, JAX would see a GPU
    monkeypatch.setitem(sys.modules, first, SimpleNamespace())
    # The fresh process's JAX sees none: its answer, not this process's.
    assert packages.gpu_unavailable_reason("jax") == "no GPU visible to JAX"


def test_a_fresh_process_that_gives_no_answer_is_said_with_its_last_words(driver, fake_jax, monkeypatch, tmp_path):
    driver("580.65.06")
    fake_jax()
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace())
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ImportError: no numpy here' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(broken))
    packages.asked_alone.cache_clear()
    assert packages.gpu_unavailable_reason("jax") == (
        "asking jax for a GPU in a process of its own failed: exit 3: ImportError: no numpy here")
    packages.asked_alone.cache_clear()


def test_jaxs_loud_backend_failure_is_its_own_reason(driver, fake_jax):
    driver("580.65.06")
    fake_jax(errors={"gpu": RuntimeError("Unable to initialize backend 'cuda': INTERNAL: no supported devices found\n"
                                         "for platform CUDA. (you may need to uninstall the failing plugin package)")})
    assert packages.gpu_unavailable_reason("jax") == (
        "JAX's CUDA backend failed to start: INTERNAL: no supported devices found for platform CUDA. (you may need to "
        "uninstall the failing plugin package)")


def test_jax_with_a_cuda_plugin_and_no_gpu_and_no_failure_sees_no_gpu(driver, fake_jax):
    driver("580.65.06")
    fake_jax(errors={"gpu": UNKNOWN_GPU, "cuda": RuntimeError("Unknown backend cuda. Available backends are ['cpu']")})
    assert packages.gpu_unavailable_reason("jax") == "no GPU visible to JAX"
    fake_jax()
    assert packages.gpu_unavailable_reason("jax") is None


# torch.compile's Triton ------------------------------------------------------------------------------------

@pytest.fixture
def triton_ready(monkeypatch, tmp_path):
    """Every Triton prerequisite met, each in tmp_path: a triton module, a clang, Python.h, an ldconfig listing a
    libcuda.so.1. Returns tmp_path."""
    (tmp_path / "triton.py").write_text("")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    executable(bin_folder / "clang", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(bin_folder))
    monkeypatch.delenv("CC", raising=False)
    include = tmp_path / "include"
    include.mkdir()
    (include / "Python.h").write_text("")
    monkeypatch.setattr(packages.sysconfig, "get_paths", lambda scheme=None: {"include": str(include)})
    driver_folder = tmp_path / "driver"
    driver_folder.mkdir()
    (driver_folder / "libcuda.so.1").write_text("")
    monkeypatch.setattr(packages, "LDCONFIG", str(executable(
        tmp_path / "ldconfig", f"#!/bin/sh\necho '1 libs found in cache'\n"
        f"printf '\\tlibcuda.so.1 (libc6,x86-64) => {driver_folder}/libcuda.so.1\\n'\n")))
    for name in ("TRITON_LIBCUDA_PATH", "LD_LIBRARY_PATH"):
        monkeypatch.delenv(name, raising=False)
    assert packages.triton_reason() is None
    return tmp_path


def test_triton_not_installed_says_so(triton_ready, monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # find_spec's answer for a module that cannot be imported
    assert packages.triton_reason() == (
        "triton is not installed (torch.compile makes Triton kernels on a GPU); it comes with PyPI's CUDA build of "
        "torch: reinstall that")


def test_a_path_without_a_compiler_names_the_compiler(triton_ready, monkeypatch):
    monkeypatch.setenv("PATH", str(triton_ready / "include"))
    assert packages.triton_reason() == ("torch.compile's Triton cannot build here: no C compiler (Triton takes $CC, "
                                        "else gcc or clang on PATH: install gcc)")
    monkeypatch.setenv("CC", "my-cc")
    assert packages.triton_reason() == "torch.compile's Triton cannot build here: CC is 'my-cc', which is no program here"
    monkeypatch.setenv("CC", str(triton_ready / "bin" / "clang"))
    assert packages.triton_reason() is None


def test_a_missing_python_h_names_the_folder_triton_looks_in(triton_ready, monkeypatch):
    (triton_ready / "include" / "Python.h").unlink()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert packages.triton_reason() == (f"torch.compile's Triton cannot build here: no Python.h in "
                                        f"{triton_ready / 'include'} (Python's headers: install python{version}-dev "
                                        "or the like)")


def test_debians_posix_local_scheme_is_read_as_posix_prefix_as_triton_does(triton_ready, monkeypatch):
    asked = []
    monkeypatch.setattr(packages.sysconfig, "get_default_scheme", lambda: "posix_local")
    monkeypatch.setattr(packages.sysconfig, "get_paths",
                        lambda scheme=None: asked.append(scheme) or {"include": str(triton_ready / "include")})
    assert packages.python_headers_missing() is None and asked == ["posix_prefix"]


def test_libcuda_is_looked_up_as_triton_does(triton_ready, monkeypatch):
    libcuda = triton_ready / "driver" / "libcuda.so.1"
    libcuda.unlink()  # ldconfig's cache lists one that is gone
    missing = ("torch.compile's Triton cannot build here: no libcuda.so.1, the NVIDIA driver's library, where Triton "
               f"looks ({packages.LDCONFIG} -p, then LD_LIBRARY_PATH): set TRITON_LIBCUDA_PATH to the folder that holds "
               "it")
    assert packages.triton_reason() == missing
    elsewhere = triton_ready / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "libcuda.so.1").write_text("")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nowhere:{elsewhere}")
    assert packages.triton_reason() == missing  # Triton reads LD_LIBRARY_PATH only where ldconfig lists none
    monkeypatch.setattr(packages, "LDCONFIG", str(executable(triton_ready / "ldconfig", "#!/bin/sh\necho '0 libs'\n")))
    assert packages.triton_reason() is None
    monkeypatch.setenv("TRITON_LIBCUDA_PATH", str(triton_ready / "driver"))  # set, it is the only place looked in
    assert packages.triton_reason() == (f"torch.compile's Triton cannot build here: TRITON_LIBCUDA_PATH is "
                                        f"{triton_ready / 'driver'}, which holds no libcuda.so.1")
    monkeypatch.setenv("TRITON_LIBCUDA_PATH", str(elsewhere))
    assert packages.triton_reason() is None


def test_an_ldconfig_that_fails_is_a_missing_libcuda_as_it_is_for_triton(triton_ready, monkeypatch):
    monkeypatch.setattr(packages, "LDCONFIG", str(triton_ready / "no-ldconfig"))
    reason = packages.triton_reason()
    assert reason.startswith(f"torch.compile's Triton cannot build here: {triton_ready / 'no-ldconfig'} -p, which "
                             "Triton runs to find libcuda.so.1, failed (")
    assert reason.endswith("); set TRITON_LIBCUDA_PATH to the folder that holds it")


def test_every_missing_build_tool_is_named_at_once(triton_ready, monkeypatch):
    monkeypatch.setenv("PATH", str(triton_ready / "include"))
    (triton_ready / "include" / "Python.h").unlink()
    (triton_ready / "driver" / "libcuda.so.1").unlink()
    reason = packages.triton_reason()
    assert [part.split(" (")[0] for part in reason.split(": ", 1)[1].split("; ")] == [
        "no C compiler", f"no Python.h in {triton_ready / 'include'}",
        "no libcuda.so.1, the NVIDIA driver's library, where Triton looks"]


def test_torch_compile_alone_needs_triton_and_only_on_a_gpu(triton_ready, monkeypatch):
    monkeypatch.setattr(packages, "unavailable_reason", lambda package: None)
    monkeypatch.setattr(packages, "gpu_unavailable_reason", lambda package: None)
    monkeypatch.setenv("PATH", str(triton_ready / "include"))
    assert solvers.get("torch_compile").gpu_needs == ("triton",)
    assert solvers.get("torch_compile").unavailable_reason("gpu").endswith("no C compiler (Triton takes $CC, else gcc "
                                                                         "or clang on PATH: install gcc)")
    assert solvers.get("torch_compile").unavailable_reason("cpu") is None
    assert solvers.get("torch_eager").unavailable_reason("gpu") is None
    assert [name for name, solver in solvers.REGISTRY.items() if solver.gpu_needs] == ["torch_compile"]


def test_an_unknown_gpu_need_is_named():
    with pytest.raises(KeyError, match="unknown GPU need 'cuda-toolkit'; known: triton"):
        packages.gpu_need_reason("cuda-toolkit")


# python -m solvers.prerequisites ---------------------------------------------------------------------------

@pytest.fixture
def machine(driver, fake_torch, fake_jax, triton_ready, monkeypatch):
    """A GPU machine where every prerequisite is met, faked, with JAX and PyTorch both loaded in this process, as in the
    pytest process; returns, for each time a framework was asked for the GPU, it and the other GPU frameworks loaded
    in the process it was asked in."""
    monkeypatch.setattr(packages, "unavailable_reason", lambda package: None)
    asked = []

    def beside(package):
        return package, [other for other in packages.GPU_FRAMEWORKS if other != package and sys.modules.get(other)]

    driver("580.65.06")
    jax = fake_jax(plugins=("12",))
    devices = jax.devices
    jax.devices = lambda kind: asked.append(beside("jax")) or devices(kind)
    fake_torch(cuda="13.0")
    monkeypatch.setattr(packages, "torch_gpu_reason", lambda: asked.append(beside("torch")) or None)

    def in_a_fresh_process(package):
        """asked_alone's process (tested above): this one, with no other GPU framework imported."""
        with monkeypatch.context() as fresh:
            for other in packages.GPU_FRAMEWORKS:
                if other != package:
                    fresh.delitem(sys.modules, other, raising=False)
            return packages.gpu_unavailable_reason(package)

    monkeypatch.setattr(packages, "asked_alone", in_a_fresh_process)
    return asked


def test_prerequisites_say_the_driver_each_build_and_what_it_needs_one_line_each(machine, capsys):
    assert prerequisites.main(["--solvers", "jax_step,torch_eager,torch_compile,numpy_loop"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "driver: 580.65.06",
        "jax 0.10.2, jax-cuda12-plugin, CUDA 12 build (needs driver 525 or later): ready",
        "torch 2.13.0, CUDA 13.0 build (needs driver 580 or later): ready",
        "triton (for torch_compile on gpu): ready",
        "ready: everything the GPU benchmarks of these solvers need is here"]
    assert [package for package, _ in machine] == ["jax", "torch"]
    assert all(loaded == [] for _, loaded in machine)  # neither where the other was loaded


def test_the_order_the_solvers_are_named_in_changes_no_answer(machine, capsys):
    answers = []
    for named in ("jax_step,torch_eager", "torch_eager,jax_step"):
        assert prerequisites.main(["--solvers", named]) == 0
        answers.append(capsys.readouterr().out)
    assert answers[0] == answers[1] and all(loaded == [] for _, loaded in machine)


def test_prerequisites_exit_1_naming_what_is_missing(machine, capsys, monkeypatch, driver, triton_ready):
    driver("570.86.15")
    monkeypatch.setattr(packages, "torch_gpu_reason", TORCH_GPU_REASON)
    monkeypatch.setenv("PATH", str(triton_ready / "include"))
    assert prerequisites.main(["--solvers", "jax_step,torch_compile"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "driver: 570.86.15"
    assert lines[2].startswith("torch 2.13.0, CUDA 13.0 build (needs driver 580 or later): NOT READY: the NVIDIA "
                               "driver here is 570.86.15")
    assert lines[3].startswith("triton (for torch_compile on gpu): NOT READY: torch.compile's Triton cannot build "
                               "here: no C compiler")
    assert lines[-1] == "NOT READY: torch, triton (torch_compile) (the lines above say why)"


def test_prerequisites_without_a_driver_or_a_framework_say_so(driver, fake_jax, monkeypatch, capsys):
    driver(None)
    fake_jax(plugins=())
    monkeypatch.setattr(packages, "unavailable_reason",
                        lambda package: "torch is not installed (faked)" if package == "torch" else None)
    assert prerequisites.main(["--solvers", "jax_step,torch_eager"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"driver: none: {nvidia.NO_DRIVER}", f"jax 0.10.2, CPU build: NOT READY: {nvidia.NO_DRIVER}",
        "torch: NOT READY: torch is not installed (faked)", "NOT READY: jax, torch (the lines above say why)"]


def test_a_check_that_fails_itself_is_a_line_not_a_traceback(machine, monkeypatch, capsys):
    def broken():
        raise OSError("faked")

    monkeypatch.setattr(packages, "torch_gpu_reason", broken)
    assert prerequisites.main(["--solvers", "torch_eager"]) == 1
    assert "torch 2.13.0, CUDA 13.0 build (needs driver 580 or later): NOT READY: could not tell: OSError: faked" \
        in capsys.readouterr().out.splitlines()


def test_prerequisites_refuse_an_unknown_solver_with_the_known_ones(capsys):
    with pytest.raises(SystemExit) as exited:
        prerequisites.main(["--solvers", "jax_step,bogus"])
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert "unknown solver 'bogus'; known solvers: numpy_loop," in said and "Traceback" not in said


def test_prerequisites_run_as_a_module_without_a_traceback(fresh_machine):
    """A GPU solver's check, run in full: the driver found, JAX imported and asked for its GPU."""
    result = subprocess.run([sys.executable, "-m", "solvers.prerequisites", "--solvers", "jax_step"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines() == [
        "driver: 580.65.06", "jax 0.0.0+stand-in, jax-cuda12-plugin, CUDA 12 build (needs driver 525 or later): "
        "NOT READY: no GPU visible to JAX", "NOT READY: jax (the lines above say why)"]
    assert result.returncode == 1 and result.stderr == ""
