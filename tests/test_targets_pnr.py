"""target=asic target.pnr=true (issue 44): the array placed by graywolf and routed by qrouter (Debian's
qflow), its wires extracted into SPEF and timed again by OpenSTA; pre- and post-route Fmax side by side."""
import re
import shutil
import subprocess
import sys

import pytest
from test_dodo import DODO

from lego_build import ConfigError, compose, run_all
from lego_build.runtime.artifacts import read_artifact
from lego_build.targets import pnr

NO_PNR = any(shutil.which(t) is None for t in ("sta", "yosys", "graywolf", "qrouter", "tclsh"))
#: a small generated design: a 2x2 array alone, no PPU, a small GEMM
SMALL = ["target=asic", "target.pnr=true", "target.scope=none", "target.asic_top=array", "arch.ppu=false",
         "arch.rows=2", "arch.cols=2", "workload.M=4", "workload.N=4", "workload.K=4"]


def test_a_bad_pnr_value_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match=r"^target\.pnr=maybe: expected a value of type bool"):
        compose(["target=asic", "target.pnr=maybe"])
    with pytest.raises(ConfigError, match=r"^target\.pnr=true: only target\.flow=asic places and routes"):
        compose(["target.pnr=true"])
    shutil.copy(DODO, tmp_path / "dodo.py")
    proc = subprocess.run([sys.executable, "-m", "doit", "build", "target=asic", "target.pnr=maybe"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: target.pnr=maybe: expected a value of type bool; use true or "
                                                "false"]


@pytest.mark.slow
@pytest.mark.skipif(NO_PNR, reason="needs Debian's qflow (apt-get install -y qflow)")
def test_post_route_fmax_is_within_15_percent_and_repeats(tmp_path, monkeypatch):
    """A generated design through the flow and the post-route check, one of its multipliers placed
    rather than the whole array (540 cells route in seconds; the array of a 2x2, 9,000, takes eight):
    every net routed and in the SPEF, the extracted wires read (post-route slower, the SPEF's
    capacitance the one reported), the post-route Fmax within 15 %; twice, to the same figures and
    the same SPEF (graywolf's seed is fixed)."""
    monkeypatch.setattr(pnr, "PLACED", "lego_mul_8x8_16")
    runs = []
    for k in range(2):
        run_all(compose(SMALL), tmp_path / str(k))
        runs.append(read_artifact(tmp_path / str(k), "sim/result.json").products["asic"])
    p = runs[0]["pnr"]
    assert p["module"] == "lego_mul_8x8_16" and p["cells"] > 300 and p["failed_routes"] == 0
    assert p["unreached_pins"] <= p["nets"] // 500  # qrouter's RC writer drops a branch now and then
    assert p["post_mhz"] < p["pre_mhz"] and p["ratio"] >= 0.85
    keep = tmp_path / "0" / "sim" / "asic" / "pnr"
    spef = (keep / "lego_mul_8x8_16.spef").read_text()
    caps = [float(c) for c in re.findall(r"^\*D_NET \S+ (\S+)$", spef, flags=re.M)]
    assert len(caps) == p["nets"] and abs(sum(caps) - p["wire_pf"]) < 0.01 and p["wire_pf"] > 0
    assert p["wirelength_mm"] > 0 and "Final: No failed routes!" in (keep / "route.log").read_text()
    assert (keep / "timing_post.txt").read_text() != (keep / "timing_pre.txt").read_text()
    assert (keep / "lego_mul_8x8_16.def.gz").is_file() and (keep / "placed.v").is_file()
    figures = ("pre_mhz", "post_mhz", "wirelength_mm", "wire_pf", "nets")
    assert [runs[1]["pnr"][k] for k in figures] == [p[k] for k in figures]
    assert (tmp_path / "1" / "sim" / "asic" / "pnr" / "lego_mul_8x8_16.spef").read_text() == spef
    report = (tmp_path / "0" / "report.md").read_text()
    assert f"Fmax **{p['post_mhz']} MHz** with the extracted wires against **{p['pre_mhz']} MHz**" in report
