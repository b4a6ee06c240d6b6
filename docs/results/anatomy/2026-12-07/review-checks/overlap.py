"""Pairwise: do the three runs' intervals overlap, and what change_verdict says (the comparison's rule)."""
import itertools, json, math, sys
from collections import Counter
from perf.judge.rules import change_verdict

def load(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        e = b["extra_info"]
        r = e.get("ratio_to_reference")
        if not r or not e.get("reference_trial_medians_s"):
            continue
        ratios = [t / ref for t, ref in zip(e["trial_medians_s"], e["reference_trial_medians_s"])]
        out[b["name"]] = (r, ratios)
    return out

runs = {i: load(f"/tmp/final2/run{i}.json") for i in (1, 2, 3)}
for a, b in itertools.combinations((1, 2, 3), 2):
    names = sorted(set(runs[a]) & set(runs[b]))
    overlap = sum(1 for n in names if runs[a][n][0]["low"] <= runs[b][n][0]["high"] and runs[b][n][0]["low"] <= runs[a][n][0]["high"])
    verdicts = Counter(change_verdict(runs[a][n][1], runs[b][n][1], 0.10)[1] for n in names)
    print(f"run{a} vs run{b}: intervals overlap {overlap}/{len(names)}; change_verdict at 10%: {dict(verdicts)}")
