"""Synthetic runs as pytest-benchmark writes them, with the extra_info perf/measure.py records, for the tests that read runs."""


def benchmark_entry(solver, device, n, per_iteration_us, iterations=1_000, rounds=5, ratio=None, spread=0.05):
    """One benchmark as pytest-benchmark writes it, with the extra_info perf/test_fssgd.py records; ratio: its paired
    ratio to numpy_loop, with an interval of ± spread."""
    median = per_iteration_us * iterations * 1e-6
    paired = {"ratio_to_reference": {"ratio": ratio, "low": ratio * (1 - spread), "high": ratio * (1 + spread)}} \
        if ratio is not None else {}
    return {
        "group": f"n={n}", "name": f"test_fssgd[{solver}-{device}-n{n}]", "param": f"{solver}-{device}-n{n}",
        "fullname": f"perf/test_fssgd.py::test_fssgd[{solver}-{device}-n{n}]",
        "params": {"device": device, "n": n},
        "extra_info": {
            "solver": solver, "device": device, "device_name": "Test CPU" if device == "cpu" else "Test GPU",
            "n": n, "iterations": iterations, "dtype": "float32", "setup_s": 0.05,
            "per_iteration_us": per_iteration_us, "w": 1.0, "b": 1.0, "loss": 1.0,
            "tensorflow": "2.21.0", "numpy": "2.4.6", "trials": 5, **paired,
        },
        "stats": {"median": median, "iqr": 0.0, "rounds": rounds, "data": [median] * rounds},
    }


def result_document(entries, tensorflow="2.21.0", profile="full", threads=1):
    """A whole run: the top-level keys of pytest-benchmark's JSON, machine_info.fssgd included."""
    return {
        "machine_info": {"node": "test", "cpu": {"brand_raw": "Test CPU"}, "fssgd": {
            "profile": profile, "cpu_model": "Test CPU", "numpy": "2.4.6", "threads": threads,
            "tensorflow": {"distribution": "tensorflow-cpu", "version": tensorflow}}},
        "commit_info": {"id": "0123456789abcdef", "dirty": False},
        "benchmarks": entries, "datetime": "2026-01-01T00:00:00", "version": "5.3.1",
    }
