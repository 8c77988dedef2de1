"""Compose ``conf/`` with Hydra's Compose API and validate it into typed objects.

Parse -> validate -> build: Hydra merges the YAML options over the structured
schemas of :mod:`lego_build.config.schema` (unknown keys and wrong types fail here),
``OmegaConf.to_object`` runs the value checks, and stages receive a
:class:`~lego_build.config.schema.LegoConfig` of plain dataclasses.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from lego_build.config.plugins import preset_dirs
from lego_build.config.schema import GROUPS, SCHEMAS, LegoConfig
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
        cs.store(group=group, name=name, node=schema)


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
        return (
            f"{group}={option}: unknown {group} preset; choose one of: "
            f"{', '.join(available_options(group, conf_dir))}"
        )
    full_key = re.search(r"full_key:\s*(\S+)", text)
    if re.search(r"Key '[^']+' not in", text):
        return f"{full_key.group(1) if full_key else first}: unknown config key (check the spelling)"
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
    import typing
    from dataclasses import fields, is_dataclass

    from omegaconf import DictConfig

    if not (isinstance(node, DictConfig) and is_dataclass(schema)):
        return
    hints = typing.get_type_hints(schema)
    known = {f.name for f in fields(schema)}
    for key in node.keys():
        if key not in known:
            raise ConfigError(f"{path}.{key}: unknown config key (check the spelling)")
        if is_dataclass(hints[key]):
            _reject_extra_keys(node[key], hints[key], f"{path}.{key}")


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
    Both give the same config or the same error (``tests/test_flow_config.py``).
    """
    _register()
    overrides = list(overrides)
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
                raise ConfigError(f"{key}: unknown config key (check the spelling); the groups are "
                                  f"{', '.join(GROUPS)}")
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
    """The plain-dict slice of one group (what a stage's up-to-date check hashes)."""
    if group not in GROUPS:
        raise KeyError(group)
    return asdict(getattr(cfg, group))


def config_hash(cfg: LegoConfig, groups: Iterable[str]) -> str:
    payload = {g: group_slice(cfg, g) for g in groups}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def workload_label(cfg: LegoConfig) -> str:
    """What the workload is called in design names and summaries: a model file's stem (letters,
    digits and ``_``; ``workload.path`` of ``workload=onnx``, ``tflite``, ``timeloop`` or a
    plugin's importer), else ``workload.name``."""
    path = getattr(cfg.workload, "path", "")
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", Path(path).stem).strip("_")[:64] if path else ""
    return stem or cfg.workload.name


def design_id(cfg: LegoConfig) -> str:
    """``<arch>-<workload>-<hash8>`` (:func:`workload_label`: a model file's stem): the hash covers
    the arch and workload groups.

    The design directory identifies the hardware and the workload it runs; the
    mapper, optimizer and target settings are tracked per stage inside it, so a
    change of ``target.*`` re-runs only the stages that read it.
    """
    return f"{cfg.arch.name}-{workload_label(cfg)}-{config_hash(cfg, ('arch', 'workload'))[:8]}"
