"""Generated Verilog runs in Verilator and matches NumPy bit-exactly, in the predicted cycles."""
import pytest

from lego_build import compose, run_all
from lego_build.flow.validate import validate
from lego_build.runtime.atomic import read_json
from lego_build.sim import verilator
from lego_build.sim.verilator import require_verilator

#: the switchable GEMM array the LEGO-MNICOC preset was before it became seed 004 §6's conv array
GEMM_MNICOC = ["arch=lego_mnicoc", "arch.family=gemm", "~arch.dataflows.ohow", "arch.dataflows.mn.spatial=[m,n]",
               "arch.dataflows.icoc.spatial=[k,n]"]

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

@pytest.fixture(scope="module", autouse=True)
def _verilator():
    require_verilator()


@pytest.mark.parametrize("overrides", [
    [],  # the default build
    ["arch.rows=8", "arch.cols=8", "workload.M=32", "workload.N=24", "workload.K=40"],  # issue acceptance 2
    ["optimizer=fpga", "workload.M=9", "workload.K=21"],  # fused multiply-accumulate primitives
    # MTTKRP: a three-operand FU, with the reduction dim k unrolled across the array
    ["arch.family=mttkrp", "arch.dataflows.main.spatial=[k,j]", "arch.control_flow=[0,0]", "workload=mttkrp",
     "workload.I=5", "workload.J=6", "workload.K=7", "workload.L=3"],
    # TTMc: the fourth kernel family, two reduction dims (l on the rows, k on the columns)
    ["arch.family=ttmc", "arch.dataflows.main.spatial=[l,k]", "arch.control_flow=[0,0]", "workload=ttmc",
     "workload.I=3", "workload.J=4", "workload.K=5", "workload.L=6", "workload.M=3"],
    ["arch.rows=3", "arch.cols=5", "arch.control_flow=[1,0]", "workload.M=10", "workload.N=11",
     "workload.K=7", "optimizer=greedy", "target.seed=7"],
    ["arch.dataflows.main.spatial=[n,m]", "arch.control_flow=[0,0]", "workload.M=9", "workload.N=6", "workload.K=1"],
    # a strided, padded conv on an output-row/column (ShiDianNao-like) unrolling
    ["workload=conv2d", "arch.family=conv2d", "arch.dataflows.main.spatial=[oh,ow]", "workload.in_h=9",
     "workload.in_w=7", "workload.in_ch=3", "workload.out_ch=5", "workload.stride=2", "workload.pad=1"],
    # weight stationary (TPU/Gemmini): partial sums flow down the columns into accumulators
    ["arch.dataflows.main.spatial=[k,n]", "workload.K=37", "workload.N=9"],
    # NVDLA-like IC-OC with broadcast control: per-column adder chains become balanced trees
    ["workload=conv2d", "arch.family=conv2d", "arch.dataflows.main.spatial=[ic,oc]", "arch.control_flow=[0,0]",
     "workload.in_h=6", "workload.in_w=5", "workload.in_ch=6", "workload.out_ch=5"],
    # Eyeriss-like KH-OH: inputs on the diagonal links, partial sums up the columns
    ["arch=eyeriss_khoh", "arch.rows=3", "arch.cols=5", "workload=conv2d", "workload.in_h=7", "workload.in_w=6",
     "workload.in_ch=3", "workload.out_ch=4"],
    # the same IC-OC array without the reduction-tree pass: chains stay chains
    ["workload=conv2d", "arch.family=conv2d", "arch.dataflows.main.spatial=[ic,oc]", "arch.control_flow=[0,0]",
     "workload.in_h=6", "workload.in_w=5", "workload.in_ch=6", "workload.out_ch=5", "optimizer=delay_only"],
    # one switchable MN / IC-OC / OH-OW array: the mapper picks MN for a GEMM with a short reduction
    # (K=2 would fill half the rows of IC-OC), IC-OC for a GEMV
    ["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "mapper.objective=latency", "workload.K=2", "workload.M=32"],
    ["arch=lego_mnicoc", "arch.rows=4", "arch.cols=4", "mapper.objective=latency", "workload.M=1", "workload.K=64"],
    # a switchable conv array whose adders share pins (pin reuse) in both of its dataflows
    ["arch=lego_khoh_icoc", "arch.rows=4", "arch.cols=4", "workload=conv2d", "workload.in_h=8", "workload.in_w=6",
     "workload.in_ch=1", "workload.out_ch=2", "workload.kh=4", "mapper.objective=latency"],
    ["arch=lego_khoh_icoc", "arch.rows=4", "arch.cols=4", "workload=conv2d", "workload.in_h=6", "workload.in_w=6",
     "workload.in_ch=4", "workload.out_ch=4", "mapper.objective=latency"],
    # ShiDianNao-like OH-OW: inputs shift between neighbours through FIFOs (kw: depth 1, kh: depth KW)
    ["arch=shidiannao", "workload=conv2d", "workload.in_h=9", "workload.in_w=10", "workload.in_ch=2",
     "workload.out_ch=3", "workload.kh=5", "workload.kw=4"],
    # stride 2 breaks the reference links: the FIFOs stay off and every FU reads its fallback bank
    ["arch=shidiannao", "workload=conv2d", "workload.in_h=9", "workload.in_w=9", "workload.in_ch=2",
     "workload.out_ch=2", "workload.stride=2", "workload.pad=1"],
], ids=["default", "8x8-32x24x40", "fpga-mac-fusion", "mttkrp-3-operand", "ttmc-3-operand", "3x5-greedy",
        "broadcast-transposed", "conv2d-s2-p1", "ws-systolic",
        "icoc-broadcast", "eyeriss-khoh", "icoc-delay-only", "mnicoc-as-mn", "mnicoc-as-icoc", "khoh-icoc-as-khoh",
        "khoh-icoc-as-ocic", "shidiannao-fifo", "shidiannao-fifo-off"])
def test_bit_exact_and_cycles_predicted(tmp_path, overrides):
    cfg = compose(overrides)
    validate(cfg)
    run_all(cfg, tmp_path)
    sim = read_json(tmp_path / "sim" / "result.json")
    assert sim["match"] and sim["cycles_match"] and sim["mismatches"] == 0, sim
    assert sim["products"] == {"lint": "clean"} and sim["target"] == "verilator"
    result, *edge = sim["tiles"]  # a single-layer workload: its tile (and its last tile if it is partial)
    dims = read_json(tmp_path / "mapping.json")["layers"][0]["dims"]
    assert [t["kind"] for t in edge] == ([] if all(dims[d] % result["tile"][d] == 0 for d in dims) else ["edge"])
    assert all(t["tile"] != result["tile"] for t in edge)
    tensors = read_json(tmp_path / "analysis.json")["layers"][0]["tensors"]
    (out,) = [t for t in tensors.values() if t["role"] == "out"]
    assert result["outputs"] == out["bytes"] // 4
    assert result["cycles_simulated"] == result["cycles_predicted"], result
    mapping = read_json(tmp_path / "mapping.json")["layers"][0]
    if cfg.optimizer.name == "lego" and result["tile"] == mapping["dims"]:
        assert mapping["compute_cycles"] == result["cycles_simulated"]  # the mapper's model is exact
    if "arch=lego_mnicoc" in overrides:
        assert result["dataflow"] == ("icoc" if "workload.M=1" in overrides else "mn")
    if "arch=lego_khoh_icoc" in overrides:
        assert result["dataflow"] == ("khoh" if "workload.in_ch=1" in overrides else "ocic")
    if "arch=shidiannao" in overrides:
        depths = [g["depth"] for g in result["fifo_groups"]]
        assert depths == ([None, None] if "workload.stride=2" in overrides else [1, 4]), result["fifo_groups"]
    summary = read_json(tmp_path / "summary.json")
    assert summary["simulation"] == "pass"
    assert "**pass**" in (tmp_path / "report.md").read_text()


def test_rtl_target_skips_simulation(tmp_path):
    run_all(compose(["target=rtl"]), tmp_path)
    assert read_json(tmp_path / "sim" / "result.json")["status"] == "skipped"
    assert (tmp_path / "rtl" / "lego_top.v").exists()


def test_fifo_words_are_what_the_shidiannao_array_computes_with(tmp_path, monkeypatch):
    """A FIFO one cycle too deep hands every destination a wrong element: the simulation must fail."""
    from lego_build.errors import StageError
    from lego_build.sim import layout

    real = layout.delay_cycles
    monkeypatch.setattr(layout, "delay_cycles", lambda bounds, t: real(bounds, t) + 1)
    cfg = compose(["arch=shidiannao", "workload=conv2d", "workload.in_h=8", "workload.in_w=8", "workload.in_ch=2",
                   "workload.out_ch=2"])
    with pytest.raises(StageError, match="wrong outputs"):
        run_all(cfg, tmp_path)
    assert read_json(tmp_path / "sim" / "result.json")["mismatches"] > 0


def test_one_build_runs_a_tile_of_each_layer_kind_switching_dataflow(tmp_path):
    """Issue 6 acceptance 2: one Verilator process runs MobileNetV2's conv, depthwise, 1x1 and
    classifier tiles back to back; the switchable array changes dataflow by a register write."""
    cfg = compose([*GEMM_MNICOC, "arch.rows=4", "arch.cols=4", "workload=mobilenetv2", "target.tile_steps=600",
                   "mapper.objective=edp"])
    run_all(cfg, tmp_path)
    sim = read_json(tmp_path / "sim" / "result.json")
    assert sim["status"] == "pass" and sim["mismatches"] == 0, sim
    tiles = sim["tiles"]
    assert [t["kind"] for t in tiles] == ["conv", "edge", "depthwise", "pointwise", "matmul"]
    assert [t["layer"] for t in tiles] == ["features.0.0", "features.0.0", "features.1.conv.0.0", "features.1.conv.1",
                                           "classifier.1"]
    edge = tiles[1]  # the first conv's last tile: the remainder of 112 output rows by the tile's bound
    assert all(edge["tile"][d] <= tiles[0]["tile"][d] for d in edge["tile"])
    assert edge["tile"] != tiles[0]["tile"]
    assert all(t["cycles_simulated"] == t["cycles_predicted"] for t in tiles)
    assert len({t["dataflow"] for t in tiles}) == 2  # MN and IC-OC, no re-elaboration in between
    assert "| classifier.1 | matmul |" in (tmp_path / "report.md").read_text()


@pytest.mark.long  # whole networks on full-size presets: benchmarks/network_sim.py runs them in RTL whole
@pytest.mark.parametrize("overrides", [
    ["arch=eyeriss", "workload=resnet50"],
    ["arch=nvdla", "workload=resnet50"],
    ["arch=shidiannao", "workload=mobilenetv2"],
    ["arch=lego_mnicoc", "workload=mobilenetv2"],
    ["arch=systolic", "workload=bert"],
], ids=["eyeriss-resnet50", "nvdla-resnet50", "shidiannao-mobilenetv2", "lego_mnicoc-mobilenetv2", "systolic-bert"])
def test_preset_network_builds_end_bit_exact_in_predicted_cycles(tmp_path, overrides):
    """Issue 6 acceptance 1: full-size presets on real networks, every simulated tile exact (on
    random data: the other data sets are the default build's)."""
    run_all(compose([*overrides, "target.data=[random]"]), tmp_path)
    sim = read_json(tmp_path / "sim" / "result.json")
    assert sim["status"] == "pass", sim
    assert all(t["match"] and t["cycles_simulated"] == t["cycles_predicted"] for t in sim["tiles"])
    kinds = {t["kind"] for t in sim["tiles"]}
    assert kinds >= ({"matmul"} if "workload=bert" in overrides else {"conv", "pointwise", "matmul"})
    if "workload=mobilenetv2" in overrides:
        assert "depthwise" in kinds
        assert any(t["ppu"]["mode"] == 3 for t in sim["tiles"])  # batch norm + ReLU6 on the PPU


def _representatives(tmp_path, overrides):
    from lego_build.flow.stages import run_stage
    from lego_build.runtime.artifacts import read_artifact
    from lego_build.sim.tiles import representatives

    cfg = compose(overrides)
    for stage in ("analyze", "graph", "optimize", "map"):
        run_stage(stage, cfg, tmp_path)
    return representatives(tmp_path, read_artifact(tmp_path, "adg.json"), cfg.target)


def test_the_edge_tile_differs_from_its_layers_first_tile(tmp_path):
    """Issue 42 item 4: ResNet-50's conv1 on Eyeriss divides evenly into its tiles (112 = 8 x 14 output
    rows, 28 x 4 columns), so its last tile is the first one's shape at an offset; the edge tile comes
    from the first layer whose last tile is partial, and every simulated tile has a shape of its own."""
    from lego_build.analysis.lowering import lower
    from lego_build.analysis.networks import network
    from lego_build.ir.mapping import Mapping
    from lego_build.mapping.sim_tile import edge_tile, fit_tile
    from lego_build.runtime.artifacts import read_artifact

    tiles = _representatives(tmp_path, ["arch=eyeriss", "workload=resnet50"])
    kinds = [t.kind for t in tiles]
    assert kinds[0] == "conv" and tiles[0].layer == "conv1" and "edge" in kinds
    edge = tiles[kinds.index("edge")]
    assert edge.layer != "conv1"
    conv1 = read_artifact(tmp_path, "mapping.json").layers[0]
    layer = {d.name: d.bound for d in tiles[0].kernel.dims}
    assert all(conv1["dims"][d] % layer[d] == 0 for d in layer)  # conv1 divides evenly: no edge of its own
    kernel = next(x.kernel for x in network("resnet50", 1, 8) if x.name == edge.layer)
    adg = read_artifact(tmp_path, "adg.json")
    row = next(e for e in read_artifact(tmp_path, "mapping.json").layers if e["name"] == edge.layer)
    corner, mapping = fit_tile(lower(kernel, adg.kernel), Mapping.from_json(row["mapping"]),
                               adg.capacities(row["dataflow"]), compose([]).target.tile_steps, row.get("tile"))
    assert edge.kernel.dims != corner.dims  # its own shape: remainder bounds
    assert all(e.bound <= c.bound for e, c in zip(edge.kernel.dims, corner.dims))
    assert edge_tile(lower(kernel, adg.kernel), corner, mapping)[0] == edge.kernel
    shapes = [tuple(d.bound for d in t.kernel.dims) for t in tiles]
    assert len(set(shapes)) == len(shapes)


def test_a_grouped_conv_is_not_a_depthwise_tile(tmp_path):
    """Issue 42 item 4: the ONNX-zoo AlexNet's group-2 convs (2 groups of 48 input channels) are
    ``grouped`` tiles; depthwise means one input channel per group."""
    from test_analysis_onnx_import import zigzag_model

    path = zigzag_model("alexnet.onnx")
    tiles = _representatives(tmp_path, ["arch=nvdla", "arch.rows=4", "arch.cols=4", "workload=onnx",
                                        f"workload.path={path}"])
    kinds = {t.kind: t for t in tiles}
    assert "depthwise" not in kinds and kinds["grouped"].layer == "Op4"
    assert {d.name: d.bound for d in kinds["grouped"].kernel.dims}["ic"] > 1  # channels per group


def test_waveform_target_writes_a_waveform(tmp_path):
    from lego_build.sim.verilator import wave_format

    run_all(compose(["target.waveform=true", "workload.M=4", "workload.N=4", "workload.K=4"]), tmp_path)
    wave = tmp_path / "sim" / f"wave.{wave_format()}"  # FST where lz4.h is installed, else VCD
    assert wave.exists() and wave.stat().st_size > 1000
    assert sorted(p.name for p in wave.parent.iterdir()) == sorted([wave.name, "result.json"])  # no temp left
    if wave.suffix == ".vcd":
        assert "lego_top" in wave.read_text()[:20000]
    assert read_json(tmp_path / "sim" / "result.json")["status"] == "pass"


def test_the_design_directory_holds_results_only(tmp_path, monkeypatch):
    """Issue 42: Verilator compiles in a scratch tree in the system's temp directory, removed when
    the stage ends; the design runs its binary from the model cache (from the scratch tree with
    ``LEGO_CACHE_DIR=off``), so no C++ or objects stay in the design directory, and a rebuild
    removes the ``sim/build`` tree older versions left there."""
    import os
    import tempfile
    from pathlib import Path

    from lego_build.sim.verilator import SCRATCH

    def scratch_trees():
        return list(Path(tempfile.gettempdir()).glob(f"{SCRATCH}{os.getpid()}-*"))

    for cache in ("cache", "off"):
        monkeypatch.setenv("LEGO_CACHE_DIR", "off" if cache == "off" else str(tmp_path / cache))
        design = tmp_path / f"design-{cache}"
        (design / "sim" / "build" / "obj_dir").mkdir(parents=True)
        (design / "sim" / "build" / "obj_dir" / "Vlego_top").write_bytes(b"an older version's binary")
        run_all(compose([]), design)
        assert read_json(design / "sim" / "result.json")["status"] == "pass"
        assert sorted(p.name for p in (design / "sim").iterdir()) == ["result.json"]
        files = [p for p in design.rglob("*") if p.is_file()]
        assert sum(p.stat().st_size for p in files) < 1_000_000, sorted((p.stat().st_size, str(p)) for p in files)
        assert scratch_trees() == []
    (binary,) = [p for p in (tmp_path / "cache" / "verilator-models").rglob("*") if p.is_file()]
    assert os.access(binary, os.X_OK)


def test_the_simulated_tile_is_the_mappers_and_its_remainder_runs_as_the_edge_tile(tmp_path):
    """16-word banks: the mapper tiles K=42 by 4 at the controller level (10 tiles + a partial
    one of 2, Ruby-T at the DRAM level: the default Ruby-S picks a divisor, 3, whose last tile is
    no edge); Verilator runs that tile and the partial one, in the cycles the mapper predicted
    for a tile."""
    cfg = compose(["arch.rows=8", "arch.cols=8", "arch.buffer_depth=16", "workload.M=32", "workload.N=24",
                   "workload.K=42", "mapper=ruby_t"])
    run_all(cfg, tmp_path)
    layer = read_json(tmp_path / "mapping.json")["layers"][0]
    sim = read_json(tmp_path / "sim" / "result.json")
    assert sim["match"] and sim["cycles_match"], sim
    first, edge = sim["tiles"]
    assert first["tile"] == layer["tile"] and layer["tile"]["k"] < 42
    tiles = -(-42 // layer["tile"]["k"])
    assert edge["kind"] == "edge" and edge["tile"]["k"] == 42 - (tiles - 1) * layer["tile"]["k"]
    per_tile = (layer["compute_cycles"] - layer["steps"]) // tiles  # start cycle + pipeline latency
    steps = first["steps"]
    assert first["cycles_simulated"] == steps + per_tile
    assert layer["compute_cycles"] == (tiles - 1) * (steps + per_tile) + edge["steps"] + per_tile


def test_accumulator_widths_against_exact_arithmetic_in_rtl(tmp_path, monkeypatch):
    """Issue 16 acceptance 1, in Verilator: a K=512 int8 GEMM on 25-bit accumulators passes every
    extreme pattern; the same GEMM on 24-bit accumulators (built with arch.overflow=wrap, so the
    up-front check lets it through) gets every output of the all-minimum pattern wrong against
    exact arithmetic, which only a golden model that wraps would miss."""
    from dataclasses import replace as dc_replace

    import numpy as np

    from lego_build.backend.interface import HostMap
    from lego_build.errors import ConfigError
    from lego_build.ir.adg import ADG
    from lego_build.ir.serialize import from_jsonable
    from lego_build.sim import tile_runs
    from lego_build.sim.golden import wrap_signed
    from lego_build.sim.tiles import DataSource, representatives

    with pytest.raises(ConfigError, match=r"arch.acc_bits=24: too narrow for layer gemm.*need 25 bits"):
        validate(compose(["workload.K=512", "arch.acc_bits=24"]))

    wide = tmp_path / "wide"
    run_all(compose(["workload.K=512", "arch.acc_bits=25"]), wide)
    sim = read_json(wide / "sim" / "result.json")
    assert sim["status"] == "pass" and sim["data"] == ["random", "min", "max", "mixed", "alternating"]
    (tile,) = sim["tiles"]
    assert [r["data"] for r in tile["runs"]] == sim["data"] and all(r["mismatches"] == 0 for r in tile["runs"])
    assert tile["tile"]["k"] == 512  # the whole reduction runs, so the extremes reach 2**23

    narrow = tmp_path / "narrow"
    run_all(compose(["workload.K=512", "arch.acc_bits=24", "arch.overflow=wrap"]), narrow)
    assert read_json(narrow / "sim" / "result.json")["overflow"] == "wrap"
    assert read_json(narrow / "summary.json")["accumulator"]["wrapping_layers"] == [{"layer": "gemm",
                                                                                    "bits_needed": 25}]
    hm = from_jsonable(HostMap, read_json(narrow / "rtl" / "host_interface.json"))
    adg = dc_replace(from_jsonable(ADG, read_json(narrow / "adg.json")), acc_wraps=False)  # exact comparison
    tiles = representatives(narrow, adg, compose([]).target)
    binary = verilator.build(narrow / "rtl", tmp_path / "work", False)  # the design's, from the model cache

    minimum = {"A": np.full((1, 16, 512), -128), "B": np.full((1, 512, 16), -128)}

    def run(pattern):
        (result,) = tile_runs.run_tiles(binary, hm, adg, tiles, 1, 10 ** 6, data=[
            DataSource(pattern, arrays=minimum, path="minimum.npz")])
        return result["runs"][0]

    caught = run("file")  # the whole 16x16 tile, every operand at -128
    assert caught["outputs"] == 256 and caught["mismatches"] == 256  # every output of the 16x16 result
    assert caught["first_mismatch"] == {"index": [0, 0, 0], "got": -(2 ** 23), "want": 2 ** 23}
    extreme = run("min")  # the reduction tile: every FU, all 512 terms
    assert extreme["tile"] == {"b": 1, "m": 4, "n": 4, "k": 512} and extreme["mismatches"] == extreme["outputs"] == 16
    real = tile_runs.golden
    monkeypatch.setattr(tile_runs, "golden", lambda kernel, data, fu: wrap_signed(real(kernel, data, fu), 24))
    assert run("file")["mismatches"] == 0 and run("min")["mismatches"] == 0  # the mutant agrees with the bug


def test_simulation_prints_progress_per_tile_run(tmp_path, capsys):
    run_all(compose(["workload.M=40", "target.tile_steps=64", "target.data=[random,min]"]), tmp_path)
    out = capsys.readouterr().out
    assert "simulate: compiling the RTL with Verilator" in out
    steps = [ln for ln in out.splitlines() if ln.startswith("simulate: [")]
    assert [s.split("]")[0] for s in steps] == ["simulate: [1/4", "simulate: [2/4", "simulate: [3/4",
                                                 "simulate: [4/4"]
    assert steps[-1].endswith("edge tile of gemm, min data")
    sim = read_json(tmp_path / "sim" / "result.json")
    edge = sim["tiles"][1]
    assert edge["kind"] == "edge" and edge["offset"]["m"] > 0  # the last tile sits at its offset in the layer
    assert [r["data"] for r in edge["runs"]] == ["random", "min"]
    assert edge["runs"][1]["tile"]["k"] == edge["tile"]["k"] and edge["runs"][1]["steps"] < edge["steps"]
    assert sim["comparisons"] == sum(r["outputs"] for t in sim["tiles"] for r in t["runs"])
