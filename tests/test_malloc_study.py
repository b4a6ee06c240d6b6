"""The malloc study (perf/research/malloc.py), end to end on a shrunk problem: fresh processes per variant, under the
settings they name, their answers checked."""

import json

from perf.research import malloc


def test_every_variant_is_timed_in_fresh_processes_and_written(tmp_path, monkeypatch):
    monkeypatch.setattr(malloc, "SIZE", 1_000)
    monkeypatch.setattr(malloc, "STEPS", 5)
    monkeypatch.setattr(malloc, "ROUNDS", 3)
    monkeypatch.setattr(malloc, "FRAMEWORKS", ("none",))  # an import of TensorFlow is seconds; the rest is the same
    assert malloc.main(["--repeats", "2", "--cpu", "0", "--seed", "1", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "malloc.json").read_text())
    assert saved["command"] == "python -m perf.research.malloc --repeats 2 --cpu 0 --seed 1"
    assert {name: len(values) for name, values in saved["us_per_step"].items()} == {
        "none, glibc's defaults": 2, "none, the workers' thresholds": 2}
    assert all(value > 0 for values in saved["us_per_step"].values() for value in values)
    assert "| none | " in (tmp_path / "README.md").read_text()


def test_a_variant_whose_process_is_not_what_it_names_stops_the_study(monkeypatch):
    # "none" must import no framework: a process that had imported one would time another variant under its name.
    monkeypatch.setattr(malloc, "CHILD", "import json; print(json.dumps({'us_per_step': 1.0, 'wrong': None, "
                                         "'imported': ['jax']}))")
    monkeypatch.setattr(malloc, "FRAMEWORKS", ("none",))
    assert malloc.main(["--repeats", "1", "--cpu", "0"]) == 2
