"""The counted measure: a worker process run under valgrind's callgrind, and the client requests with which it counts
the instructions of its runs and nothing else (why, and what counts cannot see: docs/measurement.md,
"Counted: instructions a step").

Only the standard library: the worker (perf/measure/worker.py) imports this before the version's solvers.
"""

import ctypes
import mmap
import platform
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

# The oldest valgrind counted with here (Debian 12's); older ones are refused rather than trusted untried.
OLDEST_VALGRIND = (3, 19)
# Set in a counted worker's environment: where its callgrind writes each dump (DUMPS.N, the Nth).
DUMPS_VARIABLE = "FSSGD_COUNT_DUMPS"
# What makes a count repeat, each recorded with it: one thread runs at a time under valgrind, handed over in turn
# (fair scheduling); nothing is instrumented but the counted calls (the imports and setups run 10x sooner); no source
# lines or per-instruction costs are written, only totals; valgrind's own lines (an instruction it cannot decode) go to
# the worker's log, whose end a stopped worker reports. Every thread's instructions in one total: callgrind's client
# requests zero and dump only the calling thread's where threads are kept apart (--separate-threads=yes), which
# would leave out TensorFlow's executor threads.
CALLGRIND_OPTIONS = ("--tool=callgrind", "--instr-atstart=no", "--fair-sched=yes", "--dump-line=no", "--dump-instr=no")
# A fixed hash seed: Python's dict and set layouts, and so the instructions that walk them, the same in every process.
# TensorFlow's idle pool threads not spinning (solvers/tensorflow_support.py's SPINNING_VARIABLE): under valgrind a
# spinning thread ran 84% of a tf1_callable step's instructions, as many as the scheduling let it. NumPy's BLAS on one
# thread: its threads and its caller wait for each other in spin loops, so a numpy_lean step at n = 1e5 counted 2.4 to
# 3.7 million instructions on several threads, and 729,223 in every process on one (docs/results/counted/README.md).
COUNTED_ENVIRONMENT = {"PYTHONHASHSEED": "0", "FSSGD_THREAD_SPINNING": "0", "OPENBLAS_NUM_THREADS": "1"}
# Callgrind's client requests (valgrind/callgrind.h), and valgrind's own RUNNING_ON_VALGRIND (valgrind/valgrind.h).
CALLGRIND_BASE = (ord("C") << 24) | (ord("T") << 16)
DUMP_STATS_AT, ZERO_STATS, START_INSTRUMENTATION, STOP_INSTRUMENTATION = (CALLGRIND_BASE + offset
                                                                          for offset in (3, 1, 4, 5))
RUNNING_ON_VALGRIND = 0x1001
# valgrind.h's client request for x86-64 as a function `unsigned long request(unsigned long args[6])`: args' address
# in rax, 0 (the answer off valgrind) in rdx, the four rotations of rdi that valgrind recognises, then xchg rbx, rbx;
# the answer comes back in rdx. Machine code in an executable page, so that no compiler is needed to install.
X86_64_REQUEST = bytes.fromhex("4889f8" "31d2" "48c1c703" "48c1c70d" "48c1c73d" "48c1c733" "4887db" "4889d0" "c3")


class NotCountable(RuntimeError):
    """Counting cannot run here: the message says why (valgrind missing or too old, a machine it cannot count on)."""


@cache
def valgrind_version(valgrind: str = "valgrind") -> tuple[int, ...] | None:
    """valgrind's version as numbers, (3, 19, 0); None where it is not installed or does not say."""
    if shutil.which(valgrind) is None:
        return None
    try:
        answer = subprocess.run([valgrind, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", answer)
    return tuple(int(part) for part in found.groups() if part is not None) if found else None


def unavailable_reason(valgrind: str = "valgrind") -> str | None:
    """Why nothing can be counted here, or None."""
    if platform.machine() != "x86_64":
        return f"counting issues valgrind's client requests as x86-64 code; this machine is {platform.machine()}"
    version = valgrind_version(valgrind)
    if version is None:
        return f"valgrind is not installed ({valgrind!r} not found): install it (Debian: apt install valgrind)"
    if version < OLDEST_VALGRIND:
        return (f"valgrind {'.'.join(map(str, version))} is older than "
                f"{'.'.join(map(str, OLDEST_VALGRIND))}, the oldest counted with here")
    return None


def command(dumps: Path, valgrind: str = "valgrind") -> list[str]:
    """The prefix that starts a process under callgrind, its address space not randomised (setarch -R), dumping to
    dumps; NotCountable where that cannot run here."""
    if reason := unavailable_reason(valgrind):
        raise NotCountable(reason)
    return ["setarch", platform.machine(), "-R", valgrind, *CALLGRIND_OPTIONS, f"--callgrind-out-file={dumps}"]


def settings() -> dict:
    """What a count depends on beyond the code and the machine, as recorded with it."""
    version = valgrind_version()
    return {"valgrind": version and ".".join(map(str, version)), "options": list(CALLGRIND_OPTIONS),
            "address_randomisation": False, **COUNTED_ENVIRONMENT}


@cache
def client_request():
    """request(code, argument=0) -> valgrind's answer, 0 where not under valgrind."""
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(X86_64_REQUEST)
    function = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong))(
        ctypes.addressof(ctypes.c_char.from_buffer(page)))

    def request(code: int, argument: int = 0) -> int:
        arguments = (ctypes.c_ulong * 6)(code, argument)
        return function(arguments)

    request.page = page  # the code's page lives as long as the function
    return request


def under_valgrind() -> bool:
    return platform.machine() == "x86_64" and client_request()(RUNNING_ON_VALGRIND) > 0


class Counter:
    """A counted worker's own end: counts the instructions of a call, every thread's, by zeroing callgrind's totals
    before it and dumping them after. Dumps go where DUMPS_VARIABLE says, numbered from 1 in the order asked."""

    def __init__(self, dumps: str):
        if not under_valgrind():
            raise NotCountable(f"{DUMPS_VARIABLE} is set, but this process does not run under valgrind")
        self.dumps, self.dumped = Path(dumps), 0

    def counted(self, call) -> int:
        """The instructions every thread ran in call(); a thread that ended inside it is not seen."""
        request = client_request()
        label = ctypes.create_string_buffer(b"fssgd count")  # held: the request reads it
        request(START_INSTRUMENTATION)
        request(ZERO_STATS)
        call()
        request(DUMP_STATS_AT, ctypes.addressof(label))
        request(STOP_INSTRUMENTATION)  # setups between counts run uninstrumented, as the imports did
        self.dumped += 1
        return dumped_total(self.dumps.with_name(f"{self.dumps.name}.{self.dumped}"))


def dumped_total(path: Path) -> int:
    """The instructions of one callgrind dump, every thread's: its totals line, the sum of its cost lines. Not its
    summary line, which a client request's dump fills with the calling thread's alone."""
    try:
        totals = re.search(r"^totals: (\d+)$", path.read_text(), re.M)
    except OSError as error:
        raise NotCountable(f"callgrind wrote no dump {path}: {error.strerror}") from None
    if totals is None:
        raise NotCountable(f"{path} is not a callgrind dump with a totals line")
    return int(totals.group(1))


def cpu_features() -> list[str]:
    """The CPU features this process is shown, as NumPy's dispatch found them: under valgrind, those valgrind presents,
    which decide the code paths counted (AVX-512 code on the host may be AVX2 code here)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        return []
    return sorted(name for name, present in __cpu_features__.items() if present)


# A count of about this many instructions in the fewer steps: a count runs ~50x slower than the code, and a step's
# instructions differ 70-fold between solvers (a tf2_eager step against a numpy_loop one at n = 1,000), so the steps
# are sized by a probe count of PROBE_STEPS, from PROBE_STEPS to MOST_STEPS.
COUNT_INSTRUCTIONS = 25_000_000
PROBE_STEPS, MOST_STEPS = 2, 200


def steps_counted(probe_instructions: int) -> tuple[int, int]:
    """The two step counts a counted trial runs, from a count of PROBE_STEPS: about COUNT_INSTRUCTIONS in the fewer,
    from PROBE_STEPS to MOST_STEPS (numpy_loop 200 at n = 1,000, tf1_feed_dict 19, tf2_eager 2), and twice that."""
    few = int(COUNT_INSTRUCTIONS * PROBE_STEPS / max(1, probe_instructions))
    few = max(PROBE_STEPS, min(MOST_STEPS, few))
    return few, 2 * few


class CountFailed(RuntimeError):
    """A counted trial that gave no count: the worker's error, or its process's end."""


def instructions_a_step(counts: list) -> float:
    """Instructions a step from a count reply's two [steps, instructions]: what a run costs once drops out."""
    (few, few_instructions), (many, many_instructions) = counts
    return (many_instructions - few_instructions) / (many - few)


def counted_trial(worker, solver: str, device: str, n: int, steps: tuple[int, int] | None = None) -> dict:
    """One counted trial of solver at n in a counted worker (its ask): a fresh setup; a count of PROBE_STEPS that sizes
    the two counts (steps_counted), unless steps gives them; each count warmed up, then counted; the answer checked on
    close. {"per_step", "counts", "cpu_features", "setup_s"}; NotCountable for a GPU, CountFailed where the worker
    answered an error or stopped."""
    if device != "cpu":
        raise NotCountable(f"{solver} on {device}: a {device}'s work is not instructions of this process, so only "
                           f"CPU benchmarks are counted")

    def asked(request: dict) -> dict:
        try:
            reply = worker.ask(request)
        except RuntimeError as error:  # the worker's process ended: killed, or valgrind stopped it
            raise CountFailed(f"{solver}-{device}-n{n}: {error}") from None
        if why := reply.get("error") or reply.get("missing"):
            raise CountFailed(f"{solver}-{device}-n{n}: {why}")
        return reply

    opened = asked({"op": "open", "solver": solver, "device": device, "n": n, "steps": 2 * MOST_STEPS, "calls": 1,
                    "warm_up": False})
    if steps is None:
        steps = steps_counted(asked({"op": "count", "steps": [PROBE_STEPS]})["counts"][0][1])
    counted = asked({"op": "count", "steps": list(steps)})
    asked({"op": "close"})
    return {"per_step": instructions_a_step(counted["counts"]), "counts": counted["counts"],
            "cpu_features": counted["cpu_features"], "setup_s": opened["setup_s"]}
