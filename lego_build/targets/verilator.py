"""``target.flow=verilator``: lint the RTL, then simulate it against the golden model.

The module imports only what its declaration needs (``dodo.py`` validates the config
without numerics); the run imports the simulation. Lint is ``verilator --lint-only -Wall``
of ``lego_soc`` (it instantiates the array, so one lint covers every module); a warning stops
the build. The simulation is
:func:`lego_build.sim.simulate.simulate`: representative tiles, or whole layers through the
memory system (``target.scope``), each output against exact arithmetic and each run's
cycles against the prediction.
"""
from __future__ import annotations

from pathlib import Path

from lego_build.errors import StageError
from lego_build.sim import verilator
from lego_build.targets.base import Product, Target

#: the lint's verdict (``clean``: a warning stops the build), a product of every target that lints;
#: ``report.md`` states it on its verdict line
LINT = Product("lint", "Verilator lint (-Wall)", markdown=lambda value: [])


def lint(design_dir: Path) -> str:
    """``clean``, or a one-line :class:`StageError` with the first warning."""
    warnings = verilator.lint(design_dir / "rtl", "lego_soc")
    if warnings:
        raise StageError(f"verilator -Wall lint: {len(warnings)} warnings, first: {warnings[0]}; fix the "
                         "generator, or build with target=rtl to emit without checks")
    return "clean"


def run(cfg, design_dir: Path, inputs):
    from lego_build.sim.simulate import finish, simulate  # numpy and the simulator: when a build runs

    checked = {"lint": lint(design_dir)}
    return finish({**simulate(cfg, design_dir, inputs), "target": cfg.target.flow, "products": checked}, design_dir)


TARGET = Target("verilator", "lint, then simulate tiles or whole layers against the golden model", run,
                tools=(verilator.VERILATOR,), products=(LINT,), simulates=True)
