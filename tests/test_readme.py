"""Every command in the README's Usage section runs as documented (amaranth-style example tests)."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# builds and simulates designs: deselect with -m 'not slow' for a quick run
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _usage_blocks() -> list[str]:
    usage = README.split("## Usage", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.*?)```", usage, flags=re.S)


def _doit_lines(calibration: bool = False) -> list[str]:
    """The usage section's doit commands; those of the calibration example (run in turn, in
    one project, by their own test) apart."""
    lines = []
    for block in _usage_blocks():
        for line in block.splitlines():
            if line.startswith("doit ") and (("calibrate" in line or "energy.table" in line) == calibration):
                lines.append(line.split("  #", 1)[0].strip())
    return lines


def _project(tmp_path: Path) -> Path:
    shutil.copy(REPO / "dodo.py", tmp_path / "dodo.py")
    return tmp_path


def _model_files(cwd: Path) -> None:
    """Real files for the README's model-file examples: zigzag-dse's ResNet-18 ONNX export,
    the tests' TFLite CNN, and AlexNet conv1 as a Timeloop problem."""
    from test_importers_onnx import zigzag_model
    from test_importers_tflite import small_cnn_tflite
    from test_importers_timeloop import CNN_LAYER

    shutil.copy(zigzag_model("resnet18.onnx"), cwd / "model.onnx")
    small_cnn_tflite(cwd / "model.tflite")
    (cwd / "problem.yaml").write_text(CNN_LAYER)


def _run(words: list[str], cwd: Path) -> subprocess.CompletedProcess:
    if words[0] == "doit":
        words = [sys.executable, "-m", "doit", "-f", str(cwd / "dodo.py"), *words[1:]]
    return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=900)


def test_usage_lists_the_issue_examples():
    lines = _doit_lines()
    assert "doit build" in lines
    assert "doit build arch.rows=8 arch.cols=8 workload.M=32 workload.N=24 workload.K=40" in lines


@pytest.mark.slow
@pytest.mark.parametrize("line", _doit_lines())
def test_usage_command_runs(tmp_path, line):
    cwd = _project(tmp_path)
    if "workload.path=" in line:
        _model_files(cwd)
    proc = _run(shlex.split(line), cwd)
    assert proc.returncode == 0, f"{line}\n{proc.stdout}\n{proc.stderr}"
    words = shlex.split(line)
    if words[1] == "analyze":
        doc = json.loads(next((cwd / "out").glob("*/analysis.json")).read_text())
        assert doc["totals"]["macs"] > 0 and doc["layers"]
    if words[1] == "build":
        result = json.loads((cwd / "out" / "latest" / "sim" / "result.json").read_text())
        if "target=rtl" in words or "target=yosys" in words:
            assert result["status"] == "skipped"
            assert ("synth" in result) == ("target=yosys" in words)
        else:
            assert result["status"] == "pass" and result["match"] and result["cycles_match"], result


@pytest.mark.skipif(shutil.which("sta") is None, reason="needs Debian's qflow (apt-get install -y qflow)")
def test_calibration_example_runs_in_turn(tmp_path):
    """``doit calibrate`` measures the design and writes its table; the next command's mapper
    reads those numbers (its resolved config carries them), and nothing else changed."""
    cwd = _project(tmp_path)
    calibrate, use = _doit_lines(calibration=True)
    for line in (calibrate, use):
        proc = _run(shlex.split(line), cwd)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}\n{proc.stderr}"
        if line == calibrate:
            table = (cwd / "out" / "latest" / "energy_table.yaml").read_text()
            assert "# level: model pJ / measured pJ" in table
    want = {k: float(v) for k, v in re.findall(r"^(mac_pj|hop_pj|l1_pj): ([\d.]+)$", table, flags=re.M)}
    assert len(want) == 3
    (config,) = [p for p in (cwd / "out").glob("*/config.yaml") if "bert" in p.parent.name]
    text = config.read_text()
    for key, value in want.items():
        assert re.search(rf"^    {key}: {value}$", text, flags=re.M), (key, value)


def test_documented_errors_are_what_doit_prints(tmp_path):
    documented = re.findall(r"\$ (doit build [^\n]+)\n(error: [^\n]+)\n", README)
    assert len(documented) == 2
    for command, expected in documented:
        proc = _run(shlex.split(command), _project(tmp_path))
        assert proc.returncode == 2
        assert proc.stderr.strip() == expected
        assert not (tmp_path / "out").exists()


def test_python_example_runs(tmp_path):
    (command,) = [ln for block in _usage_blocks() for ln in block.splitlines() if ln.startswith("python -c")]
    words = shlex.split(command)
    proc = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (design,) = list((tmp_path / "out").iterdir())
    assert (design / "rtl" / "lego_top.v").exists() and (design / "report.md").exists()
