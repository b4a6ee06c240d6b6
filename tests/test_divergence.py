"""A step beyond the stable limit is reported as divergence by every solver, never returned as a result."""

import numpy as np
import pytest

from solvers import standardization
from solvers.problem import SEED_LR, DivergenceError, Problem, seed_problem
from solvers.answers import STANDARDIZED

UNSTABLE_LR = 3.1e-4  # just above the seed data's limit: the error grows 1.064x per step
# lr 1e-2 makes the float64 and float32 iterates overflow to inf, then nan, within 1,000 steps.
OVERFLOWING_LR = 1e-2


def test_the_stable_limit_on_the_seed_data_is_two_over_the_largest_hessian_eigenvalue():
    problem = seed_problem()
    assert problem.stable_lr_limit == pytest.approx(3.004e-4, rel=1e-3)
    # On standardized x the Hessian is 2·I, so any step below 1 is stable: why lr 0.1 works there.
    x = (problem.x - problem.x.mean()) / problem.x.std()
    assert Problem(x=x, y=problem.y, lr=0.1, iterations=1).stable_lr_limit == pytest.approx(1.0)


def unstable(solver, monkeypatch, lr):
    """A problem on which solver's own step is unstable: the standardized solvers use lr 0.1 whatever problem.lr says."""
    if solver.expected in STANDARDIZED:
        monkeypatch.setattr(standardization, "STANDARDIZED_LR", lr * 1e4)  # beyond their limit of 1.0
        return seed_problem(iterations=1_000, lr=SEED_LR), f"lr {SEED_LR:g} is within the stable limit 0.0003004"
    return seed_problem(iterations=1_000, lr=lr), f"lr {lr:g} is above the stable limit 0.0003004 for this x"


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("lr", [UNSTABLE_LR, OVERFLOWING_LR])
def test_every_solver_reports_divergence_instead_of_a_result(solver, lr, monkeypatch):
    problem, cause = unstable(solver, monkeypatch, lr)
    with solver.prepare(problem, "cpu") as run:
        with pytest.raises(DivergenceError, match=rf"^{solver.name} diverged: {cause}.*after 1000 steps w = "):
            run()
        # Even one step overshoots to above the starting loss; and the prepared run survives its errors.
        with pytest.raises(DivergenceError, match="after 1 step w = "):
            run(1)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_the_message_says_how_fast_and_what_it_checked(monkeypatch):
    import solvers

    with solvers.get("numpy_lean").prepare(seed_problem(iterations=1_000, lr=UNSTABLE_LR), "cpu") as run:
        with pytest.raises(DivergenceError) as raised:
            run()
    assert str(raised.value).startswith(
        "numpy_lean diverged: lr 0.00031 is above the stable limit 0.0003004 for this x (the error grows 1.064x per step); "
        "after 1000 steps w = -1.147e+27, b = -1.721e+25, loss = 4.378e+57 (above the starting loss 5668; "
        "checked on the final answer, not per step)")
    with solvers.get("numpy_lean").prepare(seed_problem(iterations=1_000, lr=OVERFLOWING_LR), "cpu") as run:
        with pytest.raises(DivergenceError, match=r"w = nan, b = nan, loss = nan \(not finite;"):
            run()


def test_a_step_just_inside_the_limit_still_converges(solver):
    # The check must not fire on a slow but stable run: 3e-4 is 0.1% inside the limit.
    problem = seed_problem(iterations=1_000, lr=3e-4)
    with solver.prepare(problem, "cpu") as run:
        fit = run()
    assert np.isfinite([fit.w, fit.b, fit.loss]).all() and fit.loss < np.mean(problem.y ** 2)
