"""python -m perf.report.device_check RUN: what a device check's run (scripts/gpu-check.sh) timed on each device, and
what each solver's trials cost before their first timed round, compiles included; exit 1 where nothing was timed on
the GPU (pytest passes where every gpu benchmark skips)."""

import argparse
import json
import sys
from collections import defaultdict


def lines(benchmarks: list[dict]) -> list[str]:
    """How many benchmarks each device timed, then each solver's setup and warm-up over all its trials, largest first:
    what leaving it out would save (torch_compile compiles in every worker: gpu-check.sh --skip-compile)."""
    devices = [benchmark["extra_info"].get("device") for benchmark in benchmarks]
    said = [f"timed: {devices.count('cpu')} benchmarks on cpu, {devices.count('gpu')} on gpu"]
    before = defaultdict(list)  # (solver, device) -> each trial's setup and warm-up, seconds
    for benchmark in benchmarks:
        info = benchmark["extra_info"]
        before[info.get("solver"), info.get("device")] += info.get("trial_setup_s") or []
    if costs := {pair: seconds for pair, seconds in before.items() if seconds}:
        said.append(f"setup and warm-up before the timed rounds, compiles included: {sum(map(sum, costs.values())):.0f} s "
                    "in all")
        for (solver, device), seconds in sorted(costs.items(), key=lambda item: -sum(item[1])):
            said.append(f"  {solver} on {device}: {sum(seconds):.1f} s over {len(seconds)} trials, "
                        f"{max(seconds):.1f} s the longest")
    return said


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.report.device_check", description=__doc__.split(": ", 1)[1])
    parser.add_argument("run", help="the run's --benchmark-json file")
    path = parser.parse_args(argv).run
    try:
        with open(path) as run:
            benchmarks = json.load(run)["benchmarks"]
    except FileNotFoundError:
        print(f"no {path}: step 2 (pytest) wrote none", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"cannot read {path} as a pytest-benchmark JSON run: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 1
    print("\n".join(lines(benchmarks)))
    if not any(benchmark["extra_info"].get("device") == "gpu" for benchmark in benchmarks):
        print("no benchmark was timed on the GPU: see the skips in pytest.txt", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
