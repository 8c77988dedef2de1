"""The FPGA parts ``target.flow=fpga`` builds for (:data:`PARTS`, ``target.device``), and the fit
check a design passes before any work (:func:`fit`, issue 45).

Resources are the vendors' data-sheet figures: Lattice ECP5 family data sheet (FPGA-DS-02012,
table 1.1: LUT4s, 18 Kbit sysMEM blocks, 18x18 multipliers; the package's user I/O; a
flip-flop per LUT4, two of each per slice); Gowin GW1NR series data sheet (DS117: LUT4s,
flip-flops, 18 Kbit BSRAM, 9x9 multipliers, two per 18x18 DSP macro, the QN88P's user I/O);
Lattice iCE40 LP/HX family data sheet (FPGA-DS-02029: logic cells, each a LUT4 and a
flip-flop, 4 Kbit RAM4K blocks, no multipliers: an FU's multiplier is made of logic cells).
A part lists one package. Where the place and route needs the pins placed (Gowin's), the part
names the pin wrapper's (:mod:`.fpga_wrap`) on a board: the GW1NR-9's on the Tang Nano 9K,
its 27 MHz oscillator, its two buttons, a header pin and its first LED.
"""
from __future__ import annotations

from dataclasses import dataclass

from lego_build.errors import ConfigError


@dataclass(frozen=True)
class Part:
    """One FPGA part and package: ``family`` names its place-and-route program
    (``nextpnr-<family>``), ``pnr_args`` select the part there; resources per the data sheet."""

    name: str  # the target.device value
    family: str
    device: str  # the vendor's part number
    luts: int
    ffs: int
    brams: int  # block RAMs
    bram_bits: int  # data bits per block RAM
    dsps: int  # hard multipliers of dsp_bits x dsp_bits
    ios: int  # the package's user I/O
    pnr_args: tuple[str, ...]
    dsp_bits: int = 18
    lutrams: int = 0  # LUT RAM blocks of 16 x 4 bits (ECP5: one per PFU, a PFU per 8 LUT4s; Gowin: SSRAM)
    pins: tuple[tuple[str, str], ...] = ()  # the pin wrapper's pins, where the flow must place them
    pack_args: tuple[str, ...] = ()  # the packer's part selection


#: every ``target.device``
PARTS: dict[str, Part] = {p.name: p for p in (
    Part("ecp5-25f", "ecp5", "LFE5U-25F-6BG381C", 24_288, 24_288, 56, 18_432, 28, 197,
         ("--25k", "--package", "CABGA381", "--speed", "6"), lutrams=24_288 // 8),
    Part("ecp5-45f", "ecp5", "LFE5U-45F-6BG381C", 43_848, 43_848, 108, 18_432, 72, 203,
         ("--45k", "--package", "CABGA381", "--speed", "6"), lutrams=43_848 // 8),
    Part("ecp5-85f", "ecp5", "LFE5U-85F-6BG381C", 83_640, 83_640, 208, 18_432, 156, 205,
         ("--85k", "--package", "CABGA381", "--speed", "6"), lutrams=83_640 // 8),
    Part("gw1nr-9", "gowin", "GW1NR-LV9QN88PC6/I5", 8_640, 6_480, 26, 18_432, 40, 71,
         ("--device", "GW1NR-LV9QN88PC6/I5", "--vopt", "family=GW1N-9C"), dsp_bits=9, lutrams=270,
         pins=(("clk", "52"), ("rst", "4"), ("sin", "3"), ("load", "25"), ("sout", "10")), pack_args=("-d", "GW1N-9C")),
    Part("ice40-hx8k", "ice40", "iCE40HX8K-CT256", 7_680, 7_680, 32, 4_096, 0, 206, ("--hx8k", "--package", "ct256")),
)}


#: a block RAM's shapes (width, depth) by family, as Yosys maps memories onto them: ECP5's DP16KD
#: (36 bits wide as a PDPW16KD) and Gowin's BSRAM (18 Kbit, 36 bits wide as a simple dual port),
#: iCE40's RAM4K; and whether the family has LUT RAM (16 x 4 bits per block)
BRAM_SHAPES = {"ecp5": ((1, 16_384), (2, 8_192), (4, 4_096), (9, 2_048), (18, 1_024), (36, 512)),
               "ice40": ((2, 2_048), (4, 1_024), (8, 512), (16, 256))}
BRAM_SHAPES["gowin"] = BRAM_SHAPES["ecp5"]
LUT_RAM = {"ecp5": True, "gowin": True, "ice40": False}
#: Yosys's costs in ``memory_libmap`` (share/lattice/brams_16kd.txt, lutrams_trellis.txt; gowin/):
#: a block RAM, and a 16 x 4 LUT RAM; the cheaper mapping wins, LUT RAM on a tie
BRAM_COST, LUT_RAM_COST = 128, 4
#: what else Yosys counts, as measured on ECP5 (``synth_ecp5`` of single banks, 4-32 bits by 8-256
#: words, with and without ``-no-rw-check``): per bit of a LUT RAM's word, one for each 16-word
#: row of blocks past the first (the read multiplexer); per bit of a block RAM's word, two for the
#: bypass that makes a read meeting a write return the old word, unless the flow says none needs it
LUT_RAM_MUX, BRAM_READ_FIRST = 1, 2


def lutram_blocks(width: int, depth: int) -> int:
    """The 16 x 4 LUT RAM blocks a memory of ``depth`` words of ``width`` bits takes."""
    return -(-depth // 16) * -(-width // 4)


def bram_blocks(part: Part, width: int, depth: int, no_rw_check: bool = False) -> int:
    """The block RAMs one memory of ``depth`` words of ``width`` bits takes on ``part``: its
    cheapest tiling by one of the family's shapes, or none where LUT RAM costs Yosys no more
    (:data:`LUT_RAM_MUX`, :data:`BRAM_READ_FIRST`; a 42-word output bank, unless ``no_rw_check``:
    :func:`lutram_blocks` instead). Yosys chooses by cost alone, not by what is left, so a part's
    LUT RAM can run out (the GW1NR-9 has 270 blocks)."""
    blocks = min(-(-width // w) * -(-depth // d) for w, d in BRAM_SHAPES[part.family])
    lut = LUT_RAM_COST * lutram_blocks(width, depth) + LUT_RAM_MUX * width * (-(-depth // 16) - 1)
    bram = BRAM_COST * blocks + (0 if no_rw_check else BRAM_READ_FIRST * width)
    return 0 if LUT_RAM[part.family] and lut <= bram else blocks


def fit(part: Part, needs: dict[str, int], what: str, needs_on=None, remedies: dict[str, str] | None = None) -> None:
    """A one-line :class:`ConfigError` when ``needs`` (resource -> count: ``brams``, ``dsps``,
    ``luts``) exceed ``part``'s, naming the resource, the need and the parts that would hold
    ``what`` (the design): by ``needs_on(part)`` where given (block RAMs and multipliers differ
    by family), else by ``needs``; ``remedies`` (resource -> what makes it fit this part) is
    offered beside them, or instead of the generic advice when no part holds it."""
    for key, label in (("brams", "block RAMs"), ("lutrams", "LUT RAM blocks (16 x 4 bits)"),
                       ("dsps", f"{part.dsp_bits}x{part.dsp_bits} multipliers"),
                       ("luts", "LUT4s")):
        need, have = needs.get(key, 0), getattr(part, key)
        if need > have:
            bigger = [p.name for p in PARTS.values()
                      if all(v <= getattr(p, k) for k, v in (needs_on(p) if needs_on else needs).items())]
            remedy = (remedies or {}).get(key)
            if bigger:
                hint = f"parts that hold it: {', '.join(bigger)}" + (f"; or {remedy}" if remedy else "")
            else:
                hint = remedy or ("no listed part holds it: make the design smaller (e.g. arch.onchip_kb, "
                                  "arch.rows, arch.cols)")
            raise ConfigError(f"target.device={part.name}: {what} needs at least {need} {label}, the part has "
                              f"{have}; {hint}")
