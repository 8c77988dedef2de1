"""analysis.json: per-layer affine IR, MACs, bytes, reuse, PPU ops; valid against the shipped schema."""
import json

import pytest

from lego_build import compose, run_stage
from lego_build.analysis.stage import SCHEMA, load_layers
from lego_build.runtime.atomic import read_json

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a dev extra: pip install -e '.[dev]'")


def _analyze(tmp_path, overrides):
    run_stage("analyze", compose(overrides), tmp_path)
    doc = read_json(tmp_path / "analysis.json")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    return doc


def test_schema_ships_with_the_package():
    assert SCHEMA.is_file() and json.loads(SCHEMA.read_text())["title"] == "lego_build analysis.json"


def test_attention_splits_array_and_ppu(tmp_path):
    doc = _analyze(tmp_path, ["workload=attention"])
    units = [(layer["op"], layer["unit"]) for layer in doc["layers"]]
    assert units == [("attention_qk", "array"), ("softmax", "ppu"), ("attention_av", "array")]
    assert doc["totals"]["macs"] == 2 * 12 * 128 * 128 * 64
    assert doc["totals"]["ppu_elements"] == {"softmax": 12 * 128 * 128}
    qk = doc["layers"][0]
    assert qk["dims"] == {"b": 12, "m": 128, "n": 128, "k": 64}
    assert qk["tensors"]["A"]["bytes"] == 12 * 128 * 64 and qk["tensors"]["Y"]["bytes"] == 12 * 128 * 128 * 4
    assert qk["reuse"]["A"] == {"b": "none", "m": "none", "n": "full", "k": "none"}


def test_layers_round_trip_to_the_ir(tmp_path):
    _analyze(tmp_path, ["workload=depthwise"])
    ((entry, kernel),) = load_layers(tmp_path)
    assert entry["op"] == "depthwise" and kernel.macs == entry["macs"] == 144 * 56 * 56 * 9
    assert {d.name: d.bound for d in kernel.dims}["g"] == 144


def test_schema_rejects_a_broken_document(tmp_path):
    doc = _analyze(tmp_path, [])
    doc["layers"][0]["unit"] = "gpu"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


@pytest.mark.parametrize("preset", ["llama7b", "resnet50", "mobilenetv2", "inceptionv3", "bert", "gpt2"])
def test_network_analysis_fits_the_schema(tmp_path, preset):
    doc = _analyze(tmp_path, [f"workload={preset}"])
    assert doc["totals"]["macs"] == sum(
        layer["macs"] * layer["count"] for layer in doc["layers"] if layer["unit"] == "array")
    assert {layer["unit"] for layer in doc["layers"]} >= {"array", "ppu"}


def test_llama7b_batch_32_scales_the_projections(tmp_path):
    one = _analyze(tmp_path / "b1", ["workload=llama7b"])
    many = _analyze(tmp_path / "b32", ["workload=llama7b", "workload.batch=32"])
    fc1 = {layer["name"]: layer["macs"] for layer in one["layers"] if layer["op"] == "fc"}
    fc32 = {layer["name"]: layer["macs"] for layer in many["layers"] if layer["op"] == "fc"}
    assert fc1 and all(fc32[name] == 32 * macs for name, macs in fc1.items())


def test_schema_pins_the_artifact_format_version():
    from lego_build.ir.artifacts import ARTIFACTS

    schema = json.loads(SCHEMA.read_text())
    assert schema["properties"]["format_version"]["const"] == ARTIFACTS["analysis.json"].version
