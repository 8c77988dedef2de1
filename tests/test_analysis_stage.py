"""analysis.json: per-layer affine IR, MACs, bytes, reuse, PPU ops; valid against the shipped schema."""
import json

import pytest

from lego_build import compose, run_stage
from lego_build.analysis.stage import SCHEMA, load_layers
from lego_build.flow.atomic import read_json

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
