"""The LP/ILP solver behind delay matching and pin reuse (``optimizer.solver``).

PuLP drives either its bundled CBC (the default) or HiGHS through the ``highspy``
package (``pip install highspy``, or the ``[highs]`` extra). Both prove optimality
with a zero relative gap (CBC's default, set for HiGHS), so they reach the same
objective; the schedule itself may differ between them where several optima tie.
HiGHS runs without presolve: with it, HiGHS 1.15.1 reported a delay-matching
model of the default 4x4 GEMM array (after broadcast rewiring) solved to optimality at
489 register bits, while CBC, and HiGHS itself on the LP relaxation, found 381.

:data:`SOLVERS` names them; a user's package adds a :class:`Solver` under the entry-point
group ``lego_build.solvers`` (:mod:`lego_build.runtime.registry`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

from lego_build.errors import StageError
from lego_build.runtime.registry import Registry


@dataclass(frozen=True)
class Solver:
    """``unavailable()``: the one-line reason it cannot run here (``None``: it can);
    ``make(time_limit_s)``: the quiet PuLP solver object with that time limit."""

    name: str
    unavailable: Callable[[], str | None]
    make: Callable[[float], Any]


def always_available() -> str | None:
    return None


def _cbc(time_limit_s: float):
    import pulp

    with warnings.catch_warnings():  # PuLP 3 flags its bundled CBC for PuLP 4; it is what ships today
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s)


def _highs_available() -> bool:
    import pulp

    return pulp.HiGHS(msg=False).available()


def _highs_unavailable() -> str | None:
    if _highs_available():
        return None
    return ("optimizer.solver=highs: the highspy package is not installed; "
            "pip install highspy (or the [highs] extra), or use optimizer.solver=cbc")


def _highs(time_limit_s: float):
    import pulp

    return pulp.HiGHS(msg=False, timeLimit=time_limit_s, gapRel=0, presolve="off")


CBC = Solver("cbc", always_available, _cbc)
HIGHS = Solver("highs", _highs_unavailable, _highs)

SOLVERS: Registry[Solver] = Registry("lego_build.solvers", "optimizer.solver", {
    "cbc": "lego_build.backend.solver:CBC",
    "highs": "lego_build.backend.solver:HIGHS",
})


def make_solver(name: str, time_limit_s: float):
    """The PuLP solver object for ``optimizer.solver`` (quiet, with the time limit)."""
    solver = SOLVERS.get(name)
    if reason := solver.unavailable():
        raise StageError(reason)
    return solver.make(time_limit_s)


def solve(prob, name: str, time_limit_s: float) -> str:
    """Solve ``prob`` in place; the PuLP status name, ``"Optimal"`` only for a proven optimum.

    HiGHS reports a solution cut off by the time limit as status Optimal with a merely
    feasible solution; that is ``"Not Solved"`` here, as CBC reports it.
    """
    import pulp

    status = prob.solve(make_solver(name, time_limit_s))
    if status == pulp.LpStatusOptimal and prob.sol_status != pulp.LpSolutionOptimal:
        status = pulp.LpStatusNotSolved
    return pulp.LpStatus[status]
