"""lego_build.runtime.artifacts and the stage runner (flow.stages.run_stage): typed artifacts
with format versions, declared inputs and outputs only, config.yaml beside them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lego_build import compose
from lego_build.errors import StageError
from lego_build.flow.stages import CONFIG_FILE, STAGES, run_stage
from lego_build.ir.artifacts import ARTIFACTS, Analysis, SimResult
from lego_build.runtime.artifacts import Inputs, decode, encode, read_artifact, write_outputs


def test_every_json_output_of_the_stage_table_has_a_type():
    outputs = {path for s in STAGES for path in s.outputs if path.endswith(".json")}
    assert outputs == set(ARTIFACTS)


def test_round_trip_keeps_the_bytes_and_adds_the_version():
    doc = SimResult(status="skipped", reason="target=rtl")
    data = encode("sim/result.json", doc)
    assert data == {"status": "skipped", "reason": "target=rtl", "products": {},
                    "format_version": ARTIFACTS["sim/result.json"].version}  # None fields left out
    assert decode("sim/result.json", data) == doc


@pytest.mark.parametrize("change, words", [
    ({"format_version": 0}, "format version 0 (this lego_build reads 1)"),
    ({"format_version": None}, "format version None"),
    ({"extra": 1}, "unknown key extra for Analysis"),
])
def test_a_file_of_another_format_is_refused_in_one_line(tmp_path, change, words):
    doc = {**encode("analysis.json", Analysis("w", "preset", (), (), {})), **change}
    (tmp_path / "analysis.json").write_text(json.dumps(doc))
    with pytest.raises(StageError, match=r"analysis.json: .*rebuild the design") as info:
        read_artifact(tmp_path, "analysis.json")
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_missing_key_is_refused(tmp_path):
    doc = encode("analysis.json", Analysis("w", "preset", (), (), {}))
    del doc["totals"]
    with pytest.raises(StageError, match="missing key totals"):
        decode("analysis.json", doc)


def test_inputs_give_only_what_a_stage_declares(tmp_path):
    (tmp_path / "analysis.json").write_text(json.dumps(encode("analysis.json", Analysis("w", "p", (), (), {}))))
    inputs = Inputs(tmp_path, ("analysis.json",), "graph")
    assert inputs["analysis.json"].workload == "w" and list(inputs) == ["analysis.json"]
    with pytest.raises(KeyError, match="mapping.json is not an input of stage graph"):
        inputs["mapping.json"]


def test_outputs_must_be_declared_and_typed(tmp_path):
    with pytest.raises(KeyError, match="stage graph returned mapping.json, which it does not declare"):
        write_outputs(tmp_path, {"mapping.json": None}, ("adg.json",), "graph")
    with pytest.raises(TypeError, match="analysis.json: expected Analysis, got dict"):
        write_outputs(tmp_path, {"analysis.json": {}}, ("analysis.json",), "analyze")
    assert not list(tmp_path.iterdir())


def test_runner_checks_inputs_and_writes_the_resolved_config(tmp_path):
    cfg = compose(["workload.M=12"])
    with pytest.raises(StageError, match=r"analysis.json: missing; run the stages before graph"):
        run_stage("graph", cfg, tmp_path)
    run_stage("analyze", cfg, tmp_path)
    assert read_artifact(tmp_path, "analysis.json").totals["macs"] == 12 * 16 * 16
    config = (tmp_path / CONFIG_FILE).read_text()
    assert "M: 12" in config and "name: systolic" in config
    assert Path(tmp_path / "analysis.json").read_text().count('"format_version": 1') == 1
