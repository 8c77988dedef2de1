"""What a target is: its tools, its products and its run (:class:`Target`).

A target is what the ``simulate`` stage does with the emitted RTL (``target.flow``), in the
way of Amaranth's platforms: it declares

* its **tools** (:class:`lego_build.runtime.tools.Tool`): checked when the config is
  validated, before any work, so a missing one is a one-line error naming the target, the
  tool and the package to install (:meth:`Target.require`, exit 2);
* its **products** (:class:`Product`): the figures it adds to ``sim/result.json``
  (``products[<key>]``), the ones ``summary.json`` carries (``figures``) and how the
  reports show them, so that the report shows a plugin's target with no change to it;
* its **run**: ``run(cfg, design_dir, inputs) -> SimResult`` on the stage's declared inputs
  (:data:`lego_build.flow.stages.STAGES`); a failing check raises :class:`StageError`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from lego_build.errors import ConfigError
from lego_build.runtime.tools import Tool


def _scalars(value: Any) -> list[tuple[str, str]]:
    """A product's plain figures as ``(name, text)``: a value itself, or a dict's numbers and
    strings (nested figures are for the product's own renderers)."""
    if not isinstance(value, dict):
        return [("", str(value))]
    return [(k.replace("_", " "), f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v))
            for k, v in value.items() if isinstance(v, (int, float, str, bool))]


def plain_lines(title: str, value: Any) -> list[str]:
    """``report.md`` lines of a product without renderers of its own: one bullet of its figures."""
    return [f"* {title}: " + ", ".join(f"{k} {v}".strip() for k, v in _scalars(value)), ""]


def plain_rows(title: str, value: Any) -> list[tuple[str, str]]:
    """``report.html`` rows of a product without renderers of its own: its figures, one line."""
    return [(title, ", ".join(f"{k} {v}".strip() for k, v in _scalars(value)))]


@dataclass(frozen=True)
class Product:
    """What a target adds: ``sim/result.json`` ``products[key]`` (any JSON value), the figures of
    it that ``summary.json`` carries (``summary``: summary name -> key in the product; sweeps
    tabulate them) and its report text: ``markdown(value)`` gives ``report.md`` lines,
    ``html(value)`` plain-text ``(label, text)`` rows (the report escapes them); without them
    the report lists the product's plain figures under ``title``."""

    key: str
    title: str
    summary: Mapping[str, str] = None  # type: ignore[assignment]
    markdown: Callable[[Any], list[str]] | None = None
    html: Callable[[Any], list[tuple[str, str]]] | None = None

    def figures(self, value: Any) -> dict:
        """The product's figures for ``summary.json`` (None where the product has none)."""
        value = value if isinstance(value, dict) else {}
        return {name: value.get(key) for name, key in (self.summary or {}).items()}

    def lines(self, value: Any) -> list[str]:
        return self.markdown(value) if self.markdown else plain_lines(self.title, value)

    def rows(self, value: Any) -> list[tuple[str, str]]:
        return self.html(value) if self.html else plain_rows(self.title, value)


@dataclass(frozen=True)
class Target:
    """A ``target.flow``: ``run(cfg, design_dir, inputs)`` returns the stage's
    :class:`~lego_build.ir.artifacts.SimResult`. ``simulates``: it runs the RTL on
    ``target.data`` (validation reads a data file, the budget estimates the runs);
    ``check(cfg)``: what else must hold before any work (e.g. a Liberty file), raising
    :class:`ConfigError` or :class:`~lego_build.errors.StageError` with one line."""

    name: str
    doc: str
    run: Callable[..., Any]
    tools: tuple[Tool, ...] = ()
    products: tuple[Product, ...] = ()
    simulates: bool = False
    check: Callable[[Any], None] | None = None

    def require(self, cfg) -> None:
        """Every tool this target declares, then its ``check``: a missing one is a one-line
        :class:`ConfigError` naming the target, the tool and how to install it."""
        from lego_build.errors import StageError

        for tool in self.tools:
            if why := tool.missing():
                raise ConfigError(f"target.flow={self.name} needs {tool.name}: {why}")
        if self.check is not None:
            try:
                self.check(cfg)
            except StageError as exc:
                raise ConfigError(f"target.flow={self.name}: {exc}") from None

    def product(self, key: str) -> Product | None:
        return next((p for p in self.products if p.key == key), None)
