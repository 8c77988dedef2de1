"""Compose ``conf/`` with Hydra's Compose API and validate it into typed objects.

Parse -> validate -> build: Hydra merges the YAML options over the structured
schemas of :mod:`lego_build.config.schema` (unknown keys and wrong types fail here),
``OmegaConf.to_object`` runs the value checks, and stages receive a
:class:`~lego_build.config.schema.LegoConfig` of plain dataclasses.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
import threading
import typing
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from typing import Any, Iterable

from lego_build.config.plugins import preset_dirs
from lego_build.config.schema import GROUPS, MOVED, SCHEMAS, ArchConf, LegoConfig
from lego_build.errors import ConfigError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
_HYDRA = threading.Lock()
def searchpath_overrides() -> list[str]:
    """The Hydra override that adds the plugins' preset directories (none without plugins)."""
    dirs = preset_dirs()
    return [f"hydra.searchpath=[{','.join('file://' + d.as_posix() for d in dirs)}]"] if dirs else []

@functools.cache
def _register() -> None:
    """Store the schemas once per process (the ConfigStore is Hydra's singleton)."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="base_config", node=LegoConfig)
    for group, name, schema in SCHEMAS:
        cs.store(group=group, name=name, node=_open_dicts(schema))


def _open_dicts(schema: type) -> Any:
    """The schema as a config whose dicts of plain values (``workload.symbols``, ``arch.onchip_split``)
    take new keys from an override such as ``'workload.symbols={N: 4}'``: Hydra's struct mode
    would refuse a key the preset does not have. Their keys are checked by the schema or the
    stage that reads them; every other node stays closed."""
    from omegaconf import OmegaConf

    node = OmegaConf.structured(schema)
    hints = typing.get_type_hints(schema)
    for f in fields(schema):
        if typing.get_origin(hints[f.name]) is dict and typing.get_args(hints[f.name])[1] in (int, float, str):
            OmegaConf.set_struct(node[f.name], False)
    return node


def available_options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """Preset names of a config group (the YAML files in ``conf/<group>/`` and in plugins' presets)."""
    return sorted({p.stem for d in (conf_dir, *preset_dirs()) for p in (d / group).glob("*.yaml")})


def _chain_text(exc: BaseException) -> str:
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


@functools.cache
def _schemas() -> dict[str, type]:
    """Every dataclass of the config by class name, the name OmegaConf's "Key 'x' not in 'Y'" gives."""
    found: dict[str, type] = {}

    def walk(tp: Any) -> None:
        if is_dataclass(tp) and tp.__name__ not in found:
            found[tp.__name__] = tp
            for hint in typing.get_type_hints(tp).values():
                walk(hint)
        for arg in typing.get_args(tp):  # Dict[str, X], List[X], Optional[X]
            walk(arg)

    walk(LegoConfig)
    for _, _, schema in SCHEMAS:
        walk(schema)
    return found


def _keys_of(schema: type) -> list[str]:
    return [f.name for f in fields(schema)]


def _keys_at(parts: list[str]) -> list[str]:
    """The keys that may stand at the last part of a dotted override key (``arch.energy.x``:
    EnergyConf's; ``arch.memory.0.x``: a memory level's); a workload key may be any workload
    kind's, since the kind is not known before composition."""
    if len(parts) == 1:
        return list(GROUPS)
    if parts[0] == "workload":
        keys = {k for group, _, schema in SCHEMAS if group == "workload" for k in _keys_of(schema)}
        return sorted(keys) if len(parts) == 2 else []
    tp: Any = typing.get_type_hints(LegoConfig).get(parts[0])
    inside = False  # the previous part named a dict or a list: this part is its key or index
    for part in parts[1:-1]:
        if inside:
            tp, inside = typing.get_args(tp)[-1], False
            continue
        if not is_dataclass(tp):
            return []
        tp = typing.get_type_hints(tp).get(part)
        if typing.get_origin(tp) in (dict, list):
            inside = True
        elif typing.get_origin(tp) is typing.Union:  # Optional[X]
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
    return _keys_of(tp) if not inside and is_dataclass(tp) else []


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known key nearest ``word`` (difflib), also through its stem without a unit suffix
    (``size`` for ``size_bytes``), or ``None`` when none is close."""
    by = {k: k for k in known}
    for k in list(by):
        by.setdefault(k.rsplit("_", 1)[0], k)
    close = difflib.get_close_matches(word, list(by), n=1, cutoff=0.6)
    return by[close[0]] if close else None


def unknown_key(full_key: str, known: Iterable[str]) -> str:
    """``<key>: unknown config key; did you mean <close key>?`` (difflib over the keys beside it),
    or the keys there are when none is close; where it went for a key that moved (:data:`MOVED`)."""
    if full_key in MOVED:
        return f"{full_key} moved to {MOVED[full_key]}"
    known = sorted(known)
    leaf = re.split(r"[.\[]", full_key)[-1].rstrip("]")
    parent = full_key[: len(full_key) - len(leaf)]
    if close := closest(leaf, known):
        return f"{full_key}: unknown config key; did you mean {parent}{close}? (check the spelling)"
    there = f" (the keys here: {', '.join(known)})" if known else ""
    return f"{full_key}: unknown config key; check the spelling{there}"


#: a preset to name for a workload schema whose option is not a preset itself
_WORKLOAD_EXAMPLE = {"base_network": "resnet18", "base_model_file": "onnx"}


def _other_workloads(leaf: str, schema_name: str) -> str:
    """``; it is a key of another workload kind ...`` when one has the key."""
    options = [option for group, option, schema in SCHEMAS
               if group == "workload" and schema.__name__ != schema_name and leaf in _keys_of(schema)]
    if not options:
        return ""
    example = _WORKLOAD_EXAMPLE.get(options[0], options[0].removeprefix("base_"))
    return f"; it is a key of another workload kind, so choose that workload first, e.g. workload={example}"


def non_ascii_key(override: str) -> str | None:
    """The message for an override whose key has a character outside ASCII (an accent, a
    look-alike letter, a non-breaking space), which Hydra's grammar reports as a parse error."""
    key = override.split("=", 1)[0].lstrip("+~")
    at = next((i for i, ch in enumerate(key) if not ch.isascii()), None)
    if at is None:
        return None
    ch = key[at]
    parts = key.split(".")
    ascii_leaf = "".join(c for c in parts[-1] if c.isascii())
    close = closest(ascii_leaf, _keys_at(parts))
    hint = f", e.g. {'.'.join([*parts[:-1], close])}" if close and all(p.isascii() for p in parts[:-1]) else ""
    return (f"{key}: the key has a non-ASCII character {ch!r} (U+{ord(ch):04X}) at position {at + 1}; "
            f"retype the key in plain ASCII{hint}")


def _one_line(exc: BaseException, overrides: list[str], conf_dir: Path) -> str:
    """Turn a Hydra/OmegaConf exception into one line that names the key."""
    text = _chain_text(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if "override_grammar" in text:  # Hydra could not parse an override: name the one it was
        bad = _unparsable(overrides)
        if bad is not None:
            return (f"cannot parse override {bad!r}: write key=value, and quote a value with spaces "
                    "or ; [ ] , characters, e.g. 'workload.path=\"my model.onnx\"'")
    missing = re.search(r"Could not find '([\w]+)/([^']+)'", text)
    if missing:
        group, option = missing.groups()
        options = available_options(group, conf_dir)
        close = difflib.get_close_matches(option, options, n=1, cutoff=0.6)
        mean = f"did you mean {group}={close[0]}? " if close else ""
        return f"{group}={option}: unknown {group} preset; {mean}choose one of: {', '.join(options)}"
    full_key = re.search(r"full_key:\s*(\S+)", text)
    not_in = re.search(r"Key '([^']+)' not in '(\w+)'", text)
    if not_in:
        key = full_key.group(1) if full_key else not_in.group(1)
        schema = _schemas().get(not_in.group(2))
        if schema is LegoConfig:
            return unknown_key(key, GROUPS)
        known = _keys_of(schema) if schema else []
        if key.startswith("workload.") and (note := _other_workloads(not_in.group(1), not_in.group(2))):
            return f"{key}: unknown config key for this workload{note}"
        return unknown_key(key, known)
    converted = re.search(r"Value '([^']*)' of type '\w+' could not be converted to (\w+)", text)
    if converted and full_key:
        return f"{full_key.group(1)}={converted.group(1)}: expected a value of type {converted.group(2)}"
    invalid = re.search(r"Value '([^']*)' is not a valid (\w+)", text)
    if invalid and full_key:
        kind = invalid.group(2)
        hint = "; use true or false" if kind == "bool" else ""
        return f"{full_key.group(1)}={invalid.group(1)}: expected a value of type {kind}{hint}"
    if full_key:
        return f"{full_key.group(1)}: {first}"
    parse = re.search(r"Error parsing override '([^']*)'", text)
    if parse:
        return f"cannot parse override {parse.group(1)!r}: write key=value, e.g. arch.rows=8"
    return first


def _unparsable(overrides: list[str]) -> str | None:
    """The first override Hydra's grammar rejects."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for o in overrides:
        try:
            parser.parse_override(o)
        except Exception:  # the grammar's own exception types
            return o
    return None


def _reject_extra_keys(node: Any, schema: type, path: str) -> None:
    """Hydra lets ``+group.key=v`` append keys; a schema-checked tool must not."""
    from omegaconf import DictConfig

    if not (isinstance(node, DictConfig) and is_dataclass(schema)):
        return
    hints = typing.get_type_hints(schema)
    known = {f.name for f in fields(schema)}
    for key in node.keys():
        if key not in known:
            raise ConfigError(unknown_key(f"{path}.{key}", known))
        hint, origin = hints[key], typing.get_origin(hints[key])
        if is_dataclass(hint):
            _reject_extra_keys(node[key], hint, f"{path}.{key}")
        elif origin is dict and is_dataclass(typing.get_args(hint)[1]):  # arch.dataflows.<name>
            for name in node[key].keys():
                _reject_extra_keys(node[key][name], typing.get_args(hint)[1], f"{path}.{key}.{name}")
        elif origin is list and typing.get_args(hint) and is_dataclass(typing.get_args(hint)[0]):  # arch.memory
            for i, item in enumerate(node[key]):
                _reject_extra_keys(item, typing.get_args(hint)[0], f"{path}.{key}[{i}]")


#: Hydra composes its own logging configs with every config; a composition that runs no
#: Hydra job has no use for them, and they are a third of its time
_LOGGING_GROUPS = ("hydra/job_logging", "hydra/hydra_logging")


def _quiet(overrides: list[str]) -> list[str]:
    """``hydra/<logging>=none`` for each logging group the user's overrides leave alone."""
    named = {o.lstrip("~+").split("=", 1)[0] for o in overrides}
    return [f"{group}=none" for group in _LOGGING_GROUPS if group not in named]


def compose(overrides: Iterable[str] = (), conf_dir: Path = CONF_DIR, *, reuse: bool = True) -> LegoConfig:
    """Compose and validate the config; raises :class:`ConfigError` with a one-line message.

    With ``reuse`` (the default) the defaults list of a set of group choices is composed by
    Hydra once per process and the value overrides are applied to a copy of it by Hydra's own
    override step (:func:`_compose_reusing`); ``reuse=False`` runs Hydra's whole composition.
    Both give the same config or the same error (``tests/test_config_compose.py``).
    """
    _register()
    overrides = list(overrides)
    for line in overrides:
        if message := non_ascii_key(line):
            raise ConfigError(message)
    search = searchpath_overrides()
    with _HYDRA:  # GlobalHydra is a process-wide singleton: one composition at a time
        return _compose(overrides, search, conf_dir, reuse)


@functools.lru_cache(maxsize=4096)
def _parsed(line: str) -> Any:
    """Hydra's parse of one override (its grammar is the slow part of a composition)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_override(line)


def _fingerprint(conf_dir: Path) -> tuple:
    """Path, size and modification time of every YAML file under ``conf_dir``: an edited preset
    is composed again."""
    return tuple((str(p), st.st_size, st.st_mtime_ns)
                 for p in sorted(conf_dir.rglob("*.yaml")) for st in (p.stat(),))


@functools.lru_cache(maxsize=256)
def _composed_choices(fingerprint: tuple, groups: tuple[str, ...]) -> Any:
    """Hydra's composition of the group choices alone, once per state of the conf files
    (``fingerprint``, :func:`_fingerprint`); callers copy it before they change it."""
    from hydra import compose as hydra_compose

    return hydra_compose(config_name="config", overrides=list(groups))


def _compose_reusing(overrides: list[str], conf_dir: Path) -> Any:
    """Hydra's composition split at its own seam (``ConfigLoaderImpl._load_configuration_impl``):
    the defaults list is built from the group overrides only (Hydra's rule, ``Overrides`` in
    ``defaults_list.py``: an override is a group choice when its key is a config group in the
    repository and its value is not a dict), composed once per distinct choice, and the value
    overrides go through ``ConfigLoaderImpl._apply_overrides_to_config`` on a copy in struct mode.
    ``None`` with ``hydra.*`` value overrides or sweeps: Hydra's whole path handles those (and
    plugin search paths: the caller does not reuse with them)."""
    import copy

    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    try:
        parsed = [_parsed(line) for line in overrides]
    except Exception:  # the grammar's own exception: Hydra's whole path reports it
        return None
    repo = GlobalHydra.instance().config_loader().repository  # type: ignore[attr-defined]
    groups, values = [], []
    for o in parsed:
        if o.is_sweep_override() or o.key_or_group.split(".", 1)[0] == "hydra":
            return None
        is_group = repo.group_exists(o.key_or_group) and not isinstance(o.value(), dict)
        (groups if is_group else values).append(o)
    base = _composed_choices(_fingerprint(conf_dir), tuple(o.input_line for o in groups))
    cfg = copy.deepcopy(base)
    OmegaConf.set_struct(cfg, True)
    ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
    return cfg


def _compose(overrides: list[str], search: list[str], conf_dir: Path, reuse: bool = True) -> LegoConfig:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    try:
        lines = search + _quiet(overrides) + overrides
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
            cfg = _compose_reusing(lines, conf_dir) if reuse and not search else None
            if cfg is None:
                cfg = hydra_compose(config_name="config", overrides=lines)
        for key in cfg.keys():
            if key not in GROUPS:
                raise ConfigError(unknown_key(key, GROUPS))
        for group in GROUPS:
            _reject_extra_keys(cfg[group], OmegaConf.get_type(cfg[group]), group)
        obj = OmegaConf.to_object(cfg)
    except ConfigError:
        raise
    except Exception as exc:  # Hydra and OmegaConf raise many types; all are config errors here
        nested = exc.__cause__ or exc.__context__
        if isinstance(nested, ConfigError):
            raise ConfigError(str(nested)) from None
        raise ConfigError(_one_line(exc, overrides, conf_dir)) from None
    assert isinstance(obj, LegoConfig)
    return obj


def group_slice(cfg: LegoConfig, group: str) -> dict[str, Any]:
    """The plain-dict slice of one group."""
    if group not in GROUPS:
        raise KeyError(group)
    return asdict(getattr(cfg, group))


#: the cost model inside ``arch``: the per-access energies, the memory levels a mapping is
#: costed on, the unrollings the mapper may search and who picks the tiles (the mapper or
#: Gemmini's rule). None of it changes the hardware, so it is not in the design id; only
#: the map stage reads it (``tests/test_flow_stages.py``).
COST_MODEL: tuple[str, ...] = ("arch.energy", "arch.memory", "arch.unroll", "arch.tiling")
#: ``arch`` without its cost model: the hardware, one key per field of the arch schema
HARDWARE: tuple[str, ...] = tuple(key for key in (f"arch.{f.name}" for f in fields(ArchConf)) if key not in COST_MODEL)
#: what the design id hashes: the hardware and the workload it runs
DESIGN_KEYS: tuple[str, ...] = ("workload", *HARDWARE)


def _plain(value: Any) -> Any:
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def key_value(cfg: LegoConfig, key: str) -> Any:
    """The plain-JSON value of a dotted config key (``arch``, ``arch.energy``,
    ``arch.energy.mac_pj``): a group or a dataclass as a dict; ``KeyError`` naming the key
    for one the config does not have. A key below an unset optional part (``arch.multicore``
    is ``None``) is ``None``."""
    group, *rest = key.split(".")
    if group not in GROUPS:
        raise KeyError(f"{key}: not a config key (the groups: {', '.join(GROUPS)})")
    value: Any = getattr(cfg, group)
    for i, part in enumerate(rest):
        if value is None:
            return None
        if is_dataclass(value) and part in {f.name for f in fields(value)}:
            value = getattr(value, part)
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise KeyError(f"{key}: not a config key (no {part!r} in {'.'.join([group, *rest[:i]])})")
    return _plain(value)


def config_slice(cfg: LegoConfig, keys: Iterable[str]) -> dict[str, Any]:
    """``{key: value}`` (:func:`key_value`) of ``keys``, sorted: what a stage's up-to-date check
    and the design id hash. A key not asked for is not in it (the ``run`` group, say)."""
    return {key: key_value(cfg, key) for key in sorted(set(keys))}


def config_hash(cfg: LegoConfig, keys: Iterable[str]) -> str:
    """SHA-256 of :func:`config_slice` as canonical JSON."""
    return hashlib.sha256(json.dumps(config_slice(cfg, keys), sort_keys=True).encode()).hexdigest()


def workload_label(cfg: LegoConfig) -> str:
    """What the workload is called in design names and summaries: a model file's stem (letters,
    digits and ``_``; ``workload.path`` of ``workload=onnx``, ``tflite``, ``timeloop`` or a
    plugin's importer), else ``workload.name``."""
    path = getattr(cfg.workload, "path", "")
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", Path(path).stem).strip("_")[:64] if path else ""
    return stem or cfg.workload.name


def design_id(cfg: LegoConfig) -> str:
    """``<arch>-<workload>-<hash8>`` (:func:`workload_label`: a model file's stem): the hash covers
    :data:`DESIGN_KEYS`, the workload and the hardware (``arch`` without its :data:`COST_MODEL`).

    The design directory identifies the hardware and the workload it runs; the cost model,
    the mapper, optimizer and target settings are tracked per stage inside it (each stage
    hashes the keys it reads, :mod:`lego_build.flow.stages`), and what no stage reads (the
    ``run`` settings) is hashed nowhere.
    """
    return f"{cfg.arch.name}-{workload_label(cfg)}-{config_hash(cfg, DESIGN_KEYS)[:8]}"
