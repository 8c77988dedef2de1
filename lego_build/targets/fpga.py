"""The room of an FPGA target (not built yet): what one needs, so that it is one module here.

An FPGA flow is a :class:`~lego_build.targets.base.Target` like :mod:`.asic`:

* ``tools``: the synthesis and place-and-route programs it runs (e.g. Yosys with
  ``synth_<family>`` and nextpnr, or a vendor's), each a
  :class:`~lego_build.runtime.tools.Tool` naming the package that installs it: a missing one
  is then the one-line config error of :meth:`~lego_build.targets.base.Target.require`;
* ``check``: the device (part, package, speed grade) the config names, before any work;
* ``products``: e.g. ``fpga`` with LUTs, flip-flops, DSPs and BRAMs used and available and
  the post-route Fmax; ``summary`` names the figures sweeps tabulate, ``markdown`` / ``html``
  how the reports show them (:class:`~lego_build.targets.base.Product`);
* ``run(cfg, design_dir, inputs)``: lint (:func:`lego_build.targets.verilator.lint`),
  optionally simulate (:func:`lego_build.sim.simulate.simulate`), then synthesise
  ``design_dir / "rtl"`` (:func:`lego_build.targets.yosys.rtl_sources` lists the files and the
  memories to map to BRAM) and return a :class:`~lego_build.ir.artifacts.SimResult` with
  ``products={"lint": ..., "fpga": ...}``.

Its settings (the device, a clock constraint) go in :class:`~lego_build.config.schema.TargetConf`
and ``conf/target/fpga.yaml`` sets ``flow: fpga``; the RTL an FPGA wants (multiply-accumulate
primitives for its DSP blocks) is the optimizer's: ``optimizer=fpga`` (``conf/optimizer/fpga.yaml``).
Then one line in :data:`lego_build.targets.TARGETS` registers it.
"""
