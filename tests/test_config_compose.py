"""lego_build.config.compose: composition, one-line errors naming the key, design ids."""
from __future__ import annotations

import pytest

from lego_build.config.compose import CONF_DIR, available_options, compose, design_id, group_slice, workload_label
from lego_build.config.schema import GROUPS, MOVED, LegoConfig
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
    ["workload=onnx", "workload.path=m.onnx", "workload.symbols={N: 4}"], ["workload=onnx", "workload.path=m.onnx",
    "workload.symbols.N=2"], ["arch.onchip_kb=3", "arch.onchip_split={input: 1, weight: 1, output: 1}"],
    ["+arch.dataflows.khoh.spatal=[kh]"], ["optimizer.time_limit=0"], ["arch.rowsé=4"], ["target.seed=-1"],
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


@pytest.mark.parametrize("overrides, message", [
    (["optimizer.time_limit=0"], "optimizer.time_limit: unknown config key; did you mean optimizer.time_limit_s? "
                                 "(check the spelling)"),
    (["arch.energy.mac_p=1"], "arch.energy.mac_p: unknown config key; did you mean arch.energy.mac_pj?"),
    (["target.sed=3"], "target.sed: unknown config key; did you mean target.seed?"),
    (["archh.rows=4"], "archh: unknown config key; did you mean arch?"),
    (["arch.dataflows.main.spatal=[m,n]"], "arch.dataflows.main.spatal: unknown config key; did you mean "
                                           "arch.dataflows.main.spatial?"),
    # appended keys are checked inside dicts and lists of schemas too (they used to pass unread)
    (["+arch.dataflows.main.spatal=[m,n]"], "arch.dataflows.main.spatal: unknown config key; did you mean "
                                            "arch.dataflows.main.spatial?"),
    (["arch=eyeriss_ruby", "+arch.memory.0.sise=4"], "arch.memory[0].sise: unknown config key; did you mean "
                                                     "arch.memory[0].size_bytes?"),
    (["arch.qqqqq=1"], "arch.qqqqq: unknown config key; check the spelling (the keys here: acc_bits, "),
    (["workload.in_ch=3"], "workload.in_ch: unknown config key for this workload; it is a key of another workload "
                           "kind, so choose that workload first, e.g. workload=conv2d"),
    (["workload.path=m.onnx"], "workload.path: unknown config key for this workload; it is a key of another "
                               "workload kind, so choose that workload first, e.g. workload=onnx"),
    (["arch=eyerss"], "arch=eyerss: unknown arch preset; did you mean arch=eyeriss? choose one of: "),
])
def test_an_unknown_key_or_preset_suggests_the_closest(overrides, message):
    for reuse in (True, False):
        with pytest.raises(ConfigError) as info:
            compose(overrides, reuse=reuse)
        assert str(info.value).startswith(message)


def test_a_memory_system_key_says_where_it_went(tmp_path):
    """``arch.axi_data_bits`` and the DRAM's two keys live in ``arch.memsys`` now: the old
    spelling, as an override or in a preset, is refused with the new one."""
    import shutil

    for old, new in MOVED.items():
        with pytest.raises(ConfigError) as info:
            compose([f"{old}=64"])
        assert str(info.value) == f"{old} moved to {new}"
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "arch" / "old.yaml").write_text("defaults:\n  - systolic\ndram_bytes_per_cycle: 8\n")
    with pytest.raises(ConfigError) as info:
        compose(["arch=old"], conf_dir=conf)
    assert str(info.value) == "arch.dram_bytes_per_cycle moved to arch.memsys.dram_bytes_per_cycle"


@pytest.mark.parametrize("override, message", [
    ("arch.rowsé=4", "arch.rowsé: the key has a non-ASCII character 'é' (U+00E9) at position 10; retype the key in "
                     "plain ASCII, e.g. arch.rows"),
    ("arch.r\u043ews=4", "arch.r\u043ews: the key has a non-ASCII character '\u043e' (U+043E) at position 7; "
                        "retype the key in plain ASCII, e.g. arch.rows"),  # a Cyrillic o
    ("+arch.energy.mac_pj\u00a0=1", "arch.energy.mac_pj\u00a0: the key has a non-ASCII character '\\xa0' (U+00A0) at "
                                   "position 19; retype the key in plain ASCII, e.g. arch.energy.mac_pj"),
    ("wörkload.M=4", "wörkload.M: the key has a non-ASCII character 'ö' (U+00F6) at position 2; retype the key in "
                     "plain ASCII"),
])
def test_a_non_ascii_key_is_named_as_such(override, message):
    with pytest.raises(ConfigError) as info:
        compose([override])
    assert str(info.value) == message
    # a value may have any character
    assert compose(["workload=onnx", 'workload.path="modèle.onnx"']).workload.path == "modèle.onnx"


@pytest.mark.parametrize("reuse", [True, False])
def test_dicts_of_plain_values_take_new_keys_from_an_override(reuse):
    onnx = ["workload=onnx", "workload.path=m.onnx"]
    assert compose([*onnx, "workload.symbols={N: 4, seq: 128}"], reuse=reuse).workload.symbols == {"N": 4, "seq": 128}
    assert compose([*onnx, "workload.symbols.N=2"], reuse=reuse).workload.symbols == {"N": 2}
    split = compose(["arch.onchip_kb=3", "arch.onchip_split={input: 1, weight: 1, output: 1}"], reuse=reuse)
    assert split.arch.onchip_split == {"input": 1.0, "weight": 1.0, "output": 1.0}
    with pytest.raises(ConfigError, match=r"^arch.onchip_split: unknown role 'inputs'"):  # keys still checked
        compose(["arch.onchip_kb=3", "arch.onchip_split={inputs: 1, weight: 1, output: 1}"], reuse=reuse)
    with pytest.raises(ConfigError, match=r"^workload.symbols.N=0: a dim's size must be a positive integer"):
        compose([*onnx, "workload.symbols={N: 0}"], reuse=reuse)


#: every numeric setting a type lets through but no design has: (overrides, the key the message starts with)
OUT_OF_RANGE = [
    (["target.seed=-1"], "target.seed=-1: must be an integer >= 0"),
    (["mapper.seed=-1"], "mapper.seed=-1: must be an integer >= 0"),
    (["arch.memsys.dram_bytes_per_cycle=1e-9"], "arch.memsys.dram_bytes_per_cycle=1e-09: must be at least 0.01"),
    (["arch.memsys.dram_bytes_per_cycle=0.0099"], "arch.memsys.dram_bytes_per_cycle=0.0099: must be at least 0.01"),
    (["arch.memsys.dram_bytes_per_cycle=nan"], "arch.memsys.dram_bytes_per_cycle=nan: must be a finite number"),
    (["arch.memsys.dram_bytes_per_cycle=inf"], "arch.memsys.dram_bytes_per_cycle=inf: must be a finite number"),
    (["arch.memsys.dram_latency_cycles=1000001"],
     "arch.memsys.dram_latency_cycles=1000001: must be from 0 to 1,000,000"),
    (["arch.clock_mhz=0"], "arch.clock_mhz=0: must be in (0, 20000]"),
    (["arch.clock_mhz=5e6"], "arch.clock_mhz=5e+06: must be in (0, 20000]"),
    (["arch.clock_mhz=-inf"], "arch.clock_mhz=-inf: must be a finite number"),
    (["arch.onchip_kb=nan"], "arch.onchip_kb=nan: must be a finite number"),
    (["arch.onchip_kb=3", "arch.onchip_split={input: nan, weight: 1, output: 2}"], "arch.onchip_split="),
    (["arch.energy.mac_pj=-0.1"], "arch.energy.mac_pj=-0.1: an energy per access must be >= 0 pJ"),
    (["arch.energy.dram_pj=nan"], "arch.energy.dram_pj=nan: must be a finite number"),
    (["arch=eyeriss_ruby", "arch.memory.0.read_pj=-3"], "arch.memory[0].read_pj=-3.0: must be >= 0 pJ, or -1"),
    (["arch=eyeriss_ruby", "arch.memory.1.bandwidth_bits=inf"], "arch.memory[1].bandwidth_bits=inf: must be a finite"),
    (["arch=nmp", "arch.multicore.bandwidth_gbps=nan"], "arch.multicore.bandwidth_gbps=nan: must be a finite"),
    (["workload.bits=33"], "workload.bits=33: operands are at most 32 bits"),
    (["workload=conv2d", "workload.bits=64"], "workload.bits=64: operands are at most 32 bits"),
    (["workload=onnx", "workload.path=m.onnx", "workload.bits=40"], "workload.bits=40"),
    (["optimizer.time_limit_s=nan"], "optimizer.time_limit_s=nan: must be a finite number"),
    (["run.max_minutes=nan"], "run.max_minutes=nan: must be a finite number"),
    (["run.max_memory_gb=inf"], "run.max_memory_gb=inf: must be a finite number"),
    (["target.asic_mhz=nan"], "target.asic_mhz=nan: must be a finite number"),
    (["target.node_nm=inf"], "target.node_nm=inf: must be a finite number"),
]


@pytest.mark.parametrize("overrides, message", OUT_OF_RANGE, ids=[" ".join(o) for o, _ in OUT_OF_RANGE])
def test_every_numeric_setting_has_a_range(overrides, message):
    with pytest.raises(ConfigError) as info:
        compose(overrides)
    assert str(info.value).startswith(message)


def test_the_range_limits_themselves_are_accepted():
    cfg = compose(["arch.memsys.dram_bytes_per_cycle=0.01", "arch.memsys.dram_latency_cycles=1000000",
                   "target.seed=0", "mapper.seed=0", "workload.bits=32", "arch.operand_bits=32", "arch.acc_bits=64",
                   "arch.energy.hop_pj=0"])
    memsys = cfg.arch.memsys
    assert (memsys.dram_bytes_per_cycle, memsys.dram_latency_cycles, cfg.target.seed) == (0.01, 1_000_000, 0)
    assert compose(["arch=eyeriss_ruby", "arch.memory.0.read_pj=-1"]).arch.memory[0].read_pj == -1


MOVED_KEYS = [("target.jobs=2", "target.jobs moved to run.jobs; write run.jobs=2"),
              ("target.ray_address=local", "target.ray_address moved to run.ray_address"),
              ("target.max_memory_gb=4", "target.max_memory_gb moved to run.max_memory_gb"),
              ("target.max_minutes=5", "target.max_minutes moved to run.max_minutes"),
              ("target.confirm=true", "target.confirm moved to run.confirm"),
              ("mapper.jobs=2", "mapper.jobs moved to run.map_jobs; write run.map_jobs=2"),
              ("target.simulate=false", "target.simulate moved to target.flow; pick what the simulate stage does"),
              ("target.asic=true", "target.asic moved to target.flow")]


@pytest.mark.parametrize("override, message", MOVED_KEYS, ids=[o for o, _ in MOVED_KEYS])
def test_a_moved_key_says_where_it_went(override, message):
    """Issue 43: how to run a build is the ``run`` group; what the simulate stage does is ``target.flow``
    (the public composition, lego_build.compose, and doit's refuse the old keys)."""
    from lego_build import compose as public_compose

    with pytest.raises(ConfigError) as info:
        public_compose([override])
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_no_stage_hashes_the_run_group():
    from lego_build.config.schema import RUN_GROUP
    from lego_build.flow.stages import STAGES

    cfg = compose(["run.jobs=2", "run.map_jobs=3", "run.max_minutes=0", "run.confirm=true"])
    assert (cfg.run.jobs, cfg.run.map_jobs, cfg.run.max_minutes, cfg.run.confirm) == (2, 3, 0, True)
    assert not [s.name for s in STAGES for key in s.reads if key.split(".")[0] == RUN_GROUP]
