"""lego_build.config.compose: composition, one-line errors naming the key, design ids."""
from __future__ import annotations

import pytest

from lego_build.config.compose import CONF_DIR, available_options, compose, design_id, group_slice, workload_label
from lego_build.config.schema import GROUPS, LegoConfig
from lego_build.errors import ConfigError


def test_compose_defaults():
    cfg = compose()
    assert isinstance(cfg, LegoConfig)
    assert cfg.workload.name == "gemm"
    assert cfg.arch.name == "systolic"
    assert cfg.mapper.name == "ruby_s"
    assert cfg.optimizer.name == "lego"
    assert cfg.target.name == "verilator"
    assert (cfg.workload.M, cfg.workload.N, cfg.workload.K) == (16, 16, 16)
    assert (cfg.arch.rows, cfg.arch.cols) == (4, 4)


def test_overrides_apply_in_order():
    cfg = compose(["arch.rows=8", "workload.M=32", "arch.rows=2"])
    assert cfg.arch.rows == 2
    assert cfg.workload.M == 32


@pytest.mark.parametrize(
    "override, key",
    [
        ("workload=nope", "workload"),
        ("workload.M=-3", "workload.M"),
        ("arch.rows=abc", "arch.rows"),
        ("arch.foo=1", "arch.foo"),
        ("+arch.foo=1", "arch.foo"),
        ("mapper.objective=x", "mapper.objective"),
        ("workload.M=1.5", "workload.M"),
    ],
)
def test_bad_override_names_the_key(override, key):
    with pytest.raises(ConfigError) as info:
        compose([override])
    message = str(info.value)
    assert key in message
    assert "\n" not in message
    assert "Traceback" not in message


def test_unknown_preset_lists_the_valid_ones():
    with pytest.raises(ConfigError) as info:
        compose(["workload=nope"])
    message = str(info.value)
    assert "nope" in message
    for preset in available_options("workload"):
        assert preset in message


def test_design_id_stable_and_covers_arch_and_workload_only():
    base = design_id(compose())
    assert base == design_id(compose())
    assert base.startswith("systolic-gemm-")
    suffix = base.rsplit("-", 1)[1]
    assert len(suffix) == 8 and all(c in "0123456789abcdef" for c in suffix)
    assert design_id(compose(["arch.rows=8"])) != base
    assert design_id(compose(["workload.M=32"])) != base
    assert design_id(compose(["target.seed=2"])) == base
    assert design_id(compose(["mapper.objective=latency"])) == base
    assert design_id(compose(["optimizer=greedy"])) == base


def test_design_id_of_a_model_file_names_the_file():
    """Issue 42 item 4: nine ONNX builds were ``<arch>-onnx-<hash>``; the file's stem tells them apart
    (letters, digits and _ only), the hash still covers the file's path and the arch."""
    one = design_id(compose(["arch=gemmini_like", "workload=onnx", "workload.path=zoo/mobilenetv2-7.onnx"]))
    two = design_id(compose(["arch=gemmini_like", "workload=onnx", 'workload.path="zoo/ResNet 50 (v1.5).onnx"']))
    assert one.startswith("gemmini_like-mobilenetv2_7-") and two.startswith("gemmini_like-ResNet_50_v1_5-")
    assert design_id(compose(["workload=tflite", "workload.path=m/face_detection.tflite"])).startswith(
        "systolic-face_detection-")
    assert design_id(compose(["workload=timeloop", "workload.path=p/conv1.yaml"])).startswith("systolic-conv1-")
    assert design_id(compose(["workload=onnx", 'workload.path="x/\u6a21\u578b.onnx"'])).startswith("systolic-onnx-")
    other_dir = design_id(compose(["arch=gemmini_like", "workload=onnx", "workload.path=b/mobilenetv2-7.onnx"]))
    assert other_dir.rsplit("-", 1)[0] == one.rsplit("-", 1)[0] and other_dir != one
    assert workload_label(compose(["workload=lenet"])) == "lenet"


def test_group_slice_is_plain_json_data():
    import json

    cfg = compose()
    for group in GROUPS:
        data = group_slice(cfg, group)
        assert isinstance(data, dict)
        json.dumps(data)  # config_changed hashes it as JSON


def _presets():
    for group in GROUPS:
        for path in sorted((CONF_DIR / group).glob("*.yaml")):
            yield group, path.stem


MODEL_FILE_PRESETS = {"onnx", "tflite", "timeloop"}


@pytest.mark.parametrize("group, preset", list(_presets()))
def test_every_preset_composes(group, preset):
    extra = [f"workload.path=model.{preset}"] if group == "workload" and preset in MODEL_FILE_PRESETS else []
    cfg = compose([f"{group}={preset}", *extra])
    assert getattr(cfg, group).name == preset


@pytest.mark.parametrize("preset", sorted(MODEL_FILE_PRESETS))
def test_model_file_presets_need_a_path(preset):
    with pytest.raises(ConfigError, match=r"^workload.path: give the"):
        compose([f"workload={preset}"])


def test_every_group_has_a_preset():
    for group in GROUPS:
        assert available_options(group), f"conf/{group}/ has no presets"


@pytest.mark.parametrize("overrides, key", [
    (["arch=zigzag_eyeriss_like", "arch.memory.0.roles=[inputs]"], "arch.memory[0].roles"),
    (["arch=zigzag_eyeriss_like", "arch.memory.6.size_bytes=1024"], "arch.memory[6].size_bytes"),
    (["arch=zigzag_eyeriss_like", "arch.memory.3.size_bytes=0"], "arch.memory[3].size_bytes"),
    (["arch=zigzag_eyeriss_like", "arch.memory.4.per_pe=true"], "arch.memory[4].per_pe"),
    (["arch=zigzag_eyeriss_like", "arch.memory.1.name=rf_64B_A"], "arch.memory[1].name"),
    (["arch=zigzag_eyeriss_like", "arch.memory.0.width_bits=0"], "arch.memory[0].width_bits"),
    (["arch=zigzag_eyeriss_like", "+arch.memory.0.partition={weight: 8}"], "arch.memory[0].partition"),
    (["mapper.mapspace=ruby-x"], "mapper.mapspace"),
    (["mapper.patience=0"], "mapper.patience"),
])
def test_bad_memory_and_mapper_settings_name_the_key(overrides, key):
    with pytest.raises(ConfigError) as info:
        compose(overrides)
    assert str(info.value).startswith(key) and "\n" not in str(info.value)


# the fuzzer's bad overrides and a spread of valid ones, each after every preset of one group
_REUSE_CASES = (
    [], ["arch.rows=3", "arch.cols=5"], ["workload.M=7"], ["arch.d_t=2", "arch.control_flow=[-1,1]"],
    ["arch.rows=0"], ["arch.rows=abc"], ["arch.rows=1.5"], ["+arch.extra=1"], ["+nope=1"], ["arch.family=conv3d"],
    ["arch.dataflows.main.spatial=[m]"], ["mapper.objective=speed"], ["mapper=tso"], ["arch=nope"],
    ["optimizer.passes=[]"], ["arch.memory.0.size_bytes=1"], ["~arch.rows"], ["~workload"], ["workload=conv2d",
    "workload.in_ch=8"], ["workload.in_ch=4", "workload=depthwise"], ["++arch.rows=2"], ["arch={rows: 2}"],
    ["arch.rows=1,2"], ["arch.rows="], ["arch.rows=[1"], ["hydra/job_logging=default"], ["hydra.run.dir=x"],
    ["workload=gemm", "workload=conv2d"], ["mapper.seed=x", "arch.rows=2"],
)


def _outcome(overrides, reuse):
    try:
        return compose(overrides, reuse=reuse)
    except ConfigError as exc:
        return f"ConfigError: {exc}"


@pytest.mark.parametrize("group", GROUPS)
def test_reusing_composed_defaults_gives_hydras_config_for_every_preset(group):
    """The reusing composition (group choices composed once, value overrides applied by Hydra's own
    step) equals Hydra's whole composition on every preset, and again from the reused choice."""
    for option in available_options(group):
        overrides = [f"{group}={option}", f"{group}.name={option}x"]
        whole = _outcome(overrides, reuse=False)
        assert _outcome(overrides, reuse=True) == whole == _outcome(overrides, reuse=True), overrides


@pytest.mark.parametrize("case", _REUSE_CASES, ids=" ".join)
def test_reusing_composed_defaults_gives_hydras_config_or_error(case):
    """The same under good and bad value overrides, group choices, deletions, sweeps and ``hydra``
    keys: the same config or the same one-line error."""
    overrides = ["arch=eyeriss", *case]
    whole = _outcome(overrides, reuse=False)
    assert _outcome(overrides, reuse=True) == whole == _outcome(overrides, reuse=True)


def test_reused_defaults_follow_an_edited_preset(tmp_path):
    import shutil

    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    assert compose(["arch.cols=3"], conf_dir=conf).arch.rows == 4
    preset = conf / "arch" / "systolic.yaml"
    preset.write_text(preset.read_text().replace("rows: 4", "rows: 12"))
    assert compose(["arch.cols=3"], conf_dir=conf).arch.rows == 12
