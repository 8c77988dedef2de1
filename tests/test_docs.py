"""The README's and docs/'s examples hold (amaranth-style example tests).

The commands that take a distinct path run as documented (:data:`RUN`, the calibration pair,
the documented errors, the Python example); every other ``doit`` command in a fenced block
composes a valid config through the product's own :func:`lego_build.compose`, with no build;
the config keys the prose names exist in the schema, and the files it names exist.
``docs/benchmarks.md`` is generated from ``benchmarks/results`` and checked by its own test.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "benchmarks.md")]
TEXT = {p.relative_to(REPO).as_posix(): p.read_text() for p in PAGES}

#: the documented commands that run, each a path the others do not take: the default build, a
#: network's build, analysis alone, the map stage alone (a preset's dataflows; TSO on the
#: multicore NPU), the doit task list, Yosys, and the three model-file importers
RUN = (
    "doit build",
    "doit build workload=resnet50",
    "doit analyze workload=llama7b",
    "doit map arch=eyeriss workload=resnet50 mapper=ruby_s",
    "doit map arch=nmp mapper=tso workload=inceptionv3",
    "doit list",
    "doit build target=yosys",
    # the README's "doit build target=fpga ..." runs in tests/test_targets_fpga.py, with its checks
    "doit analyze workload=onnx workload.path=model.onnx",
    "doit analyze workload=tflite workload.path=model.tflite",
    "doit analyze workload=timeloop workload.path=problem.yaml",
)



def fenced_lines(prefix: str) -> list[tuple[str, str]]:
    """(page, line) of every line starting with ``prefix`` in a fenced block, its comment cut."""
    found = []
    for page, text in TEXT.items():
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
            for line in block.splitlines():
                if line.startswith(prefix):
                    found.append((page, line.split("  #", 1)[0].strip()))
    return found


def doit_lines() -> list[str]:
    return list(dict.fromkeys(line for _, line in fenced_lines("doit ")))


def calibration_lines() -> list[str]:
    return [line for line in doit_lines() if "calibrate" in line or "energy.table" in line]


def composed_lines() -> list[str]:
    """The doit commands checked by composition alone."""
    return [line for line in doit_lines() if line not in RUN and line not in calibration_lines()]


def _schema_fields() -> dict[str, list[type]]:
    """Each config group's schemas: the workload kinds' (``SCHEMAS``), the others' from the root."""
    from lego_build.config.schema import SCHEMAS, LegoConfig

    groups: dict[str, list[type]] = {}
    for group, _, schema in SCHEMAS:
        groups.setdefault(group, []).append(schema)
    for group, kind in typing.get_type_hints(LegoConfig).items():
        if dataclasses.is_dataclass(kind):
            groups.setdefault(group, []).append(kind)
    return groups


def _has_key(key: str) -> bool:
    """``key`` (``group.field.field...``; ``<name>`` or ``*`` for a free part) names a field of
    one of its group's schemas."""
    group, *parts = key.split(".")
    for schema in _schema_fields().get(group, []):
        kind: typing.Any = schema
        for part in parts:
            origin = typing.get_origin(kind)
            if origin is typing.Union:  # Optional[...]
                kind = next(a for a in typing.get_args(kind) if a is not type(None))
                origin = typing.get_origin(kind)
            if origin is dict:
                kind = typing.get_args(kind)[1]  # the part is a free name
            elif part == "*" or kind is typing.Any or origin is list:
                break
            elif dataclasses.is_dataclass(kind) and part in {f.name for f in dataclasses.fields(kind)}:
                kind = typing.get_type_hints(kind)[part]
            else:
                break
        else:
            return True
        if part == "*" or kind is typing.Any or typing.get_origin(kind) is list:
            return True
    return False


def _overrides(line: str) -> list[str]:
    words = shlex.split(line)[2:]
    return words


def _project(tmp_path: Path) -> Path:
    shutil.copy(REPO / "dodo.py", tmp_path / "dodo.py")
    return tmp_path


def _model_files(cwd: Path) -> None:
    """Real files for the model-file examples: zigzag-dse's ResNet-18 ONNX export, the tests'
    TFLite CNN, and AlexNet conv1 as a Timeloop problem."""
    from test_analysis_onnx_import import zigzag_model
    from test_analysis_tflite_import import small_cnn_tflite
    from test_analysis_timeloop_import import CNN_LAYER

    shutil.copy(zigzag_model("resnet18.onnx"), cwd / "model.onnx")
    small_cnn_tflite(cwd / "model.tflite")
    (cwd / "problem.yaml").write_text(CNN_LAYER)


def _run(words: list[str], cwd: Path) -> subprocess.CompletedProcess:
    if words[0] == "doit":
        words = [sys.executable, "-m", "doit", "-f", str(cwd / "dodo.py"), *words[1:]]
    return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=900)


# ------------------------------------------------------------------ quick: what the docs name


def test_readme_lists_the_issue_examples_and_its_set_up_commands():
    readme = [line for page, line in fenced_lines("") if page == "README.md"]
    assert "doit build" in readme
    assert "doit build arch.rows=8 arch.cols=8 workload.M=32 workload.N=24 workload.K=40" in readme
    # .ci/run runs the test command; the asic target's one install command stands beside them
    assert readme.count("pip install -e '.[dev]' && doit build") == 1
    assert readme.count("pip install -e '.[dev]' && pytest") == 1
    assert "apt-get install -y qflow" in readme
    ci = (REPO / ".ci" / "run").read_text().rstrip()
    assert "pip install -e '.[dev]' &&" in ci and ci.endswith("&& pytest")


def test_readme_stays_short():
    assert len((REPO / "README.md").read_bytes()) < 15_000


def test_every_run_command_is_documented():
    documented = doit_lines()
    assert [line for line in RUN if line not in documented] == []
    assert len(calibration_lines()) == 2


def _anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_docs_link_to_pages_and_headings_that_exist():
    for page, text in TEXT.items():
        for target, anchor in re.findall(r"\]\(([^)#:]+\.md)(?:#([^)]*))?\)", text):
            path = (REPO / page).parent / target
            if path.name == "benchmarks.md" and not path.exists():  # generated by its own command
                continue
            assert path.exists(), (page, target)
            assert not anchor or anchor in _anchors(path.read_text()), (page, target, anchor)


def test_named_files_exist():
    for page, text in TEXT.items():
        for path in re.findall(r"\b((?:lego_build|tests|benchmarks)/[\w/.-]+\.(?:py|json|yaml))\b", text):
            assert (REPO / path).exists(), (page, path)


def test_named_config_keys_exist():
    keys = set()
    for text in TEXT.values():
        keys |= set(re.findall(r"`'?((?:workload|arch|mapper|optimizer|target|run)(?:\.(?:[A-Za-z_]\w*|<\w+>|\*))+)",
                               text))
    assert sorted(k for k in keys if not _has_key(k)) == []


@pytest.mark.parametrize("line", composed_lines())
def test_documented_command_composes(line):
    """Each documented doit command not run here names a task and composes a valid config."""
    import lego_build

    task = shlex.split(line)[1]
    assert task in {"build", "analyze", "graph", "optimize", "map", "emit", "simulate", "report", "calibrate",
                    "clean", "list", "info"}, line
    if "run.ray_address=" in line and importlib.util.find_spec("ray") is None:
        # the test install leaves the [ray] extra out: the command must then say which extra it needs
        with pytest.raises(lego_build.ConfigError, match=r"run\.ray_address=.*pip install -e '\.\[ray\]'"):
            lego_build.compose(_overrides(line))
        return
    lego_build.compose(_overrides(line))


# ------------------------------------------------------------------ slow: the commands that run


@pytest.mark.slow
@pytest.mark.parametrize("line", RUN)
def test_documented_command_runs(tmp_path, line):
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
        if "target=yosys" in words:
            assert result["status"] == "skipped" and "synth" in result["products"]
        else:
            assert result["status"] == "pass" and result["match"] and result["cycles_match"], result


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("sta") is None, reason="needs Debian's qflow (apt-get install -y qflow)")
def test_calibration_example_runs_in_turn(tmp_path):
    """``doit calibrate`` measures the design and writes its table; the next command's mapper
    reads those numbers (its resolved config carries them), and nothing else changed."""
    cwd = _project(tmp_path)
    calibrate, use = calibration_lines()
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


@pytest.mark.slow
def test_documented_errors_are_what_doit_prints(tmp_path):
    documented = [m for text in TEXT.values() for m in re.findall(r"\$ (doit build [^\n]+)\n(error: [^\n]+)\n", text)]
    assert len(documented) == 2
    for command, expected in documented:
        proc = _run(shlex.split(command), _project(tmp_path))
        assert proc.returncode == 2
        assert proc.stderr.strip() == expected
        assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_python_example_runs(tmp_path):
    (command,) = [line for _, line in fenced_lines("python -c")]
    words = shlex.split(command)
    proc = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (design,) = list((tmp_path / "out").iterdir())
    assert (design / "rtl" / "lego_top.v").exists() and (design / "report.md").exists()
