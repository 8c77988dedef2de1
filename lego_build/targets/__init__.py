"""Targets: what the ``simulate`` stage does with the emitted RTL, one module each, chosen by
``target.flow`` (:data:`TARGETS`; each a :class:`~lego_build.targets.base.Target`: its tools,
its products and its run).

* :mod:`.verilator`: lint, then simulate (tiles or whole layers) against the golden model;
* :mod:`.rtl`: emit only;
* :mod:`.yosys`: lint, then gate-level cell counts (PyPI's Yosys);
* :mod:`.asic`: lint, simulate with toggle coverage, then area, Fmax and power from the
  standard-cell flow (:mod:`.stdcell`) and the cost model's check against it (:mod:`.energy_check`);
* :mod:`.fpga`: lint, simulate, then synthesis, place and route and a bitstream for an FPGA
  part (:mod:`.fpga_parts`) with PyPI's Yosys and nextpnr.

This layer sits above :mod:`lego_build.sim` (the simulator driver, test data, the memory
system's programs: what every simulating target shares) and below :mod:`lego_build.report`
(which renders the products a target declares). A new target is one module defining a
:class:`~lego_build.targets.base.Target`, one line here and one ``conf/target/<name>.yaml``;
outside lego_build, an entry point in the group ``lego_build.targets``::

    [project.entry-points."lego_build.targets"]
    my_fpga = "my_plugin.fpga:TARGET"
"""
from __future__ import annotations

from lego_build.runtime.registry import Registry
from lego_build.targets.base import Product, Target

#: every ``target.flow``
TARGETS: Registry[Target] = Registry("lego_build.targets", "target.flow", {
    "verilator": "lego_build.targets.verilator:TARGET",
    "rtl": "lego_build.targets.rtl:TARGET",
    "yosys": "lego_build.targets.yosys:TARGET",
    "asic": "lego_build.targets.asic:TARGET",
    "fpga": "lego_build.targets.fpga:TARGET",
})

__all__ = ["TARGETS", "Product", "Target"]
