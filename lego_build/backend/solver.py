"""The LP/ILP solver behind delay matching and pin reuse (``optimizer.solver``).

PuLP drives either its bundled CBC (the default) or HiGHS through the ``highspy``
package (``pip install highspy``, or the ``[highs]`` extra). Both prove optimality
with a zero relative gap (CBC's default, set for HiGHS), so they reach the same
objective; the schedule itself may differ between them where several optima tie.
HiGHS runs without presolve: with it, HiGHS 1.15.1 reported a delay-matching
model of the default 4x4 GEMM array (after broadcast rewiring) solved to optimality at
489 register bits, while CBC, and HiGHS itself on the LP relaxation, found 381.
"""
from __future__ import annotations

import warnings

from lego_build.flow.stages import StageError

SOLVERS = ("cbc", "highs")


def _highs_available() -> bool:
    import pulp

    return pulp.HiGHS(msg=False).available()


def unavailable(name: str) -> str | None:
    """One-line reason why solver ``name`` cannot run here, or ``None``."""
    if name == "highs" and not _highs_available():
        return ("optimizer.solver=highs: the highspy package is not installed; "
                "pip install highspy (or the [highs] extra), or use optimizer.solver=cbc")
    return None


def make_solver(name: str, time_limit_s: float):
    """The PuLP solver object for ``optimizer.solver`` (quiet, with the time limit)."""
    import pulp

    reason = unavailable(name)
    if reason:
        raise StageError(reason)
    if name == "cbc":
        with warnings.catch_warnings():  # PuLP 3 flags its bundled CBC for PuLP 4; it is what ships today
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s)
    if name == "highs":
        return pulp.HiGHS(msg=False, timeLimit=time_limit_s, gapRel=0, presolve="off")
    raise ValueError(f"optimizer.solver={name!r}: must be one of {', '.join(SOLVERS)}")


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
