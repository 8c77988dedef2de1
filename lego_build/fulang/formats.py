"""Number formats of the low-bit FUs (seed 004 §6.3, Table 6.3) with bit-exact NumPy references.

Every format turns real numbers into *codes* (the unsigned bit patterns the hardware stores)
and codes back into their exact values (float64 holds every value of these formats exactly).
Element formats code one number; group formats code a group of ``group`` numbers with shared
fields. The readings chosen where a source is vague:

* ``int8`` / ``int4``: two's complement, round half to even, saturate.
* ``fp16``: IEEE 754 binary16 (bias 15, subnormals, inf, NaN); round to nearest even, overflow
  to infinity (IEEE's default). A NaN input becomes the quiet NaN ``0x7E00``.
* ``fp4``: E2M1 of the OCP Microscaling (MX) spec v1.0: bias 1, no inf or NaN, values
  0, 0.5, 1, 1.5, 2, 3, 4, 6; round to nearest even, saturate at 6 (the spec's conversion
  with saturation). NaN has no code: encoding one is an error.
* ``mx4`` / ``mx6`` / ``mx9``: seed 004 names MX4/6/9 after the shared-microexponent formats of
  Rouhani et al. (ISCA 2023), which the OCP spec grew out of: a group of 16 shares an 8-bit
  exponent ``E`` (E8M0: ``2**(code - 127)``, code 255 reserved for NaN); each pair of elements
  shares a 1-bit micro-exponent ``u``; an element is a sign and an ``m``-bit magnitude ``M``
  (2, 4, 7 bits), value ``(-1)**s * M * 2**(E - u - (m - 1))``; so 1 + m + 8/16 + 1/2 = 4, 6, 9
  bits per element. Encoding: ``E = floor(log2(max |x|))`` over the group, ``u = 1`` where the
  pair's largest magnitude is below ``2**E``, ``M`` rounded to nearest even and saturated at
  ``2**m - 1``. (The OCP spec's MXFP formats use groups of 32 with floating-point elements;
  the issue and the seed use groups of 16.)
* ``vsq4``: VS-Quant (Dai et al., MLSys 2021) with 4-bit signed elements in [-7, 7] and an
  unsigned 8-bit integer scale per vector of 16 (its "4/8" configuration): value
  ``gamma * s * q``; ``gamma`` (one float per tensor) stays outside the FU. Encoding: ``s``
  from the vector's ``max |x| / 7`` relative to the tensor's largest, rounded to nearest even
  in [1, 255]; ``q = round(x / (gamma * s))``.
* ``fp4int4``: seed 004's FP4-INT4 groupwise dot product (group 64): weights ``fp4`` codes, and
  activations unsigned 4-bit codes ``a`` with a per-group zero point ``z`` (value ``scale * (a +
  z)``, ``z`` a signed 8-bit integer) and per-group ``fp16`` scales on both sides, so that
  ``scale_a * scale_w * (sum(a * w) + z * sum(w))`` is the group's dot product (the seed's
  pseudo-code). Encoding activations: ``z = round(min / scale)`` with ``scale = (max - min) / 15``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from lego_build.errors import InputError


def _rne(x: np.ndarray) -> np.ndarray:
    """Round half to even, as integers (float64 inputs)."""
    return np.rint(x).astype(np.int64)


@dataclass(frozen=True)
class IntFormat:
    """Two's complement integers of ``bits`` bits (``signed``) or unsigned ones."""

    name: str
    bits: int
    signed: bool = True

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def encode(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if np.isnan(x).any():
            raise InputError(f"format {self.name}: NaN has no code")
        return (np.clip(_rne(x), self.lo, self.hi) & ((1 << self.bits) - 1)).astype(np.int64)

    def decode(self, codes) -> np.ndarray:
        c = np.asarray(codes, dtype=np.int64) & ((1 << self.bits) - 1)
        if self.signed:
            c = np.where(c >> (self.bits - 1), c - (1 << self.bits), c)
        return c.astype(np.float64)


@dataclass(frozen=True)
class FloatFormat:
    """Sign, ``exp_bits`` of exponent (bias ``bias``), ``man_bits`` of mantissa; ``ieee``: the
    all-ones exponent holds inf and NaN (else it is a normal binade and values saturate)."""

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    ieee: bool

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    def decode(self, codes) -> np.ndarray:
        c = np.asarray(codes, dtype=np.int64)
        sign = (c >> (self.bits - 1)) & 1
        e = (c >> self.man_bits) & ((1 << self.exp_bits) - 1)
        f = c & ((1 << self.man_bits) - 1)
        # normal: (1 + f / 2**m) * 2**(e - bias); subnormal (e = 0): f / 2**m * 2**(1 - bias)
        mag = np.where(e > 0, (f + (1 << self.man_bits)) * np.exp2(e - self.bias - self.man_bits),
                       f * np.exp2(1 - self.bias - self.man_bits))
        if self.ieee:
            top = e == (1 << self.exp_bits) - 1
            mag = np.where(top, np.where(f == 0, np.inf, np.nan), mag)
        return np.where(sign == 1, -mag, mag)

    @cached_property
    def _positive(self) -> tuple[np.ndarray, np.ndarray]:
        """The finite non-negative codes and their values, in increasing order."""
        codes = np.arange(1 << (self.bits - 1), dtype=np.int64)
        values = self.decode(codes)
        keep = np.isfinite(values)
        return codes[keep], values[keep]

    @property
    def max(self) -> float:
        return float(self._positive[1][-1])

    def encode(self, x) -> np.ndarray:
        """Round to nearest, ties to the even code; past the largest value: inf (``ieee``, from
        halfway to the next binade on) or saturation."""
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        if nan.any() and not self.ieee:
            raise InputError(f"format {self.name}: NaN has no code")
        codes, values = self._positive
        mag = np.abs(np.where(nan, 0.0, x))
        i = np.clip(np.searchsorted(values, mag), 1, len(values) - 1)  # values[i-1] < mag <= values[i]
        lo, hi = values[i - 1], values[i]
        take_hi = (mag - lo > hi - mag) | ((mag - lo == hi - mag) & (codes[i] % 2 == 0))
        out = np.where(take_hi, codes[i], codes[i - 1])
        out = np.where(mag <= values[0], codes[0], out)
        top = values[-1]
        if self.ieee:
            ulp = top - values[-2]
            inf_code = ((1 << self.exp_bits) - 1) << self.man_bits
            out = np.where(mag >= top + ulp / 2, inf_code, np.where(mag >= top, codes[-1], out))
            out = np.where(nan, inf_code | (1 << (self.man_bits - 1)), out)
        else:
            out = np.where(mag >= top, codes[-1], out)
        sign = np.signbit(x) & ~nan
        return (out | (sign.astype(np.int64) << (self.bits - 1))).astype(np.int64)


INT8 = IntFormat("int8", 8)
INT4 = IntFormat("int4", 4)
UINT4 = IntFormat("uint4", 4, signed=False)
FP16 = FloatFormat("fp16", 5, 10, 15, ieee=True)
FP4 = FloatFormat("fp4", 2, 1, 1, ieee=False)
E8M0_BIAS = 127


@dataclass(frozen=True)
class MXFormat:
    """Shared-microexponent block format (module docstring): per group ``exp`` (E8M0 code), per
    pair ``micro`` (0 or 1), per element ``sign`` and ``mag`` (``man_bits`` wide)."""

    name: str
    man_bits: int
    group: int = 16
    sub: int = 2

    @property
    def bits(self) -> float:
        return 1 + self.man_bits + 8 / self.group + 1 / self.sub

    def encode(self, x) -> dict[str, np.ndarray]:
        """``x``: (..., group) reals -> codes ``exp`` (...), ``micro`` (..., group/sub), ``sign`` and
        ``mag`` (..., group)."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-1] != self.group:
            raise InputError(f"format {self.name}: groups of {self.group} elements, got {x.shape[-1]}")
        if not np.isfinite(x).all():
            raise InputError(f"format {self.name}: inf or NaN has no code")
        mag = np.abs(x)
        top = mag.max(axis=-1)
        e = np.where(top > 0, np.floor(np.log2(np.where(top > 0, top, 1.0))), -E8M0_BIAS).astype(np.int64)
        e = np.clip(e, -E8M0_BIAS, E8M0_BIAS)
        pair = mag.reshape(*mag.shape[:-1], self.group // self.sub, self.sub).max(axis=-1)
        micro = (pair < np.exp2(e)[..., None]).astype(np.int64)
        step = np.exp2(e[..., None] - np.repeat(micro, self.sub, axis=-1) - (self.man_bits - 1))
        m = np.minimum(_rne(mag / step), (1 << self.man_bits) - 1)
        return {"exp": e + E8M0_BIAS, "micro": micro, "sign": (np.signbit(x) & (m > 0)).astype(np.int64), "mag": m}

    def decode(self, codes: dict[str, np.ndarray]) -> np.ndarray:
        e = np.asarray(codes["exp"], dtype=np.int64) - E8M0_BIAS
        u = np.repeat(np.asarray(codes["micro"], dtype=np.int64), self.sub, axis=-1)
        value = codes["mag"] * np.exp2(e[..., None] - u - (self.man_bits - 1))
        return np.where(np.asarray(codes["sign"]) == 1, -value, value)


@dataclass(frozen=True)
class VSQFormat:
    """VS-Quant: signed ``elem_bits`` elements (symmetric), an unsigned ``scale_bits`` integer
    scale per vector of ``group``, a float ``gamma`` per tensor (outside the FU)."""

    name: str
    elem_bits: int = 4
    scale_bits: int = 8
    group: int = 16

    @property
    def bits(self) -> float:
        return self.elem_bits + self.scale_bits / self.group

    def encode(self, x) -> dict[str, np.ndarray]:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-1] != self.group:
            raise InputError(f"format {self.name}: vectors of {self.group} elements, got {x.shape[-1]}")
        if not np.isfinite(x).all():
            raise InputError(f"format {self.name}: inf or NaN has no code")
        qmax, smax = (1 << (self.elem_bits - 1)) - 1, (1 << self.scale_bits) - 1
        per = np.abs(x).max(axis=-1) / qmax
        gamma = float(per.max()) / smax if per.max() > 0 else 1.0
        s = np.clip(_rne(per / gamma), 1, smax)
        q = np.clip(_rne(x / (gamma * s[..., None])), -qmax, qmax)
        return {"gamma": np.float64(gamma), "scale": s, "q": q}

    def decode(self, codes: dict[str, np.ndarray]) -> np.ndarray:
        return codes["gamma"] * codes["scale"][..., None] * codes["q"]


@dataclass(frozen=True)
class FP4INT4Format:
    """Seed 004's FP4-INT4 groups (module docstring): ``fp4`` weights, asymmetric 4-bit
    activations with a zero point, ``fp16`` scales per group of ``group``."""

    name: str
    group: int = 64

    @property
    def bits(self) -> float:
        """Per weight: an element and its share of the group's fp16 scale."""
        return 4 + 16 / self.group

    @property
    def act_bits(self) -> float:
        """Per activation: an element and its share of the group's fp16 scale and int8 zero point."""
        return 4 + (16 + 8) / self.group

    def encode_weights(self, w) -> dict[str, np.ndarray]:
        w = self._group(w)
        scale = FP16.decode(FP16.encode(np.abs(w).max(axis=-1) / FP4.max))
        scale = np.where(scale > 0, scale, 1.0)
        return {"scale": FP16.encode(scale), "w": FP4.encode(w / scale[..., None])}

    def encode_acts(self, a) -> dict[str, np.ndarray]:
        a = self._group(a)
        lo, hi = a.min(axis=-1), a.max(axis=-1)
        scale = FP16.decode(FP16.encode((hi - lo) / UINT4.hi))
        scale = np.where(scale > 0, scale, 1.0)
        zero = np.clip(_rne(lo / scale), -128, 127)
        q = np.clip(_rne(a / scale[..., None]) - zero[..., None], 0, UINT4.hi)
        return {"scale": FP16.encode(scale), "zero": zero, "a": q}

    def dot(self, acts: dict[str, np.ndarray], wgts: dict[str, np.ndarray]) -> np.ndarray:
        """Per group, ``scale_a * scale_w * (sum(a * w) + zero * sum(w))``, exactly (float64
        holds it: 11-bit scale mantissas and a sum of 64 products of 4-bit by 4-bit values)."""
        w = FP4.decode(wgts["w"])
        inner = (acts["a"] * w).sum(axis=-1) + acts["zero"] * w.sum(axis=-1)
        return FP16.decode(acts["scale"]) * FP16.decode(wgts["scale"]) * inner

    def _group(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-1] != self.group:
            raise InputError(f"format {self.name}: groups of {self.group} elements, got {x.shape[-1]}")
        if not np.isfinite(x).all():
            raise InputError(f"format {self.name}: inf or NaN has no code")
        return x


#: ``arch.format``-style names of every format, defined once
FORMATS = {f.name: f for f in (INT8, INT4, UINT4, FP16, FP4, MXFormat("mx4", 2), MXFormat("mx6", 4),
                               MXFormat("mx9", 7), VSQFormat("vsq4"), FP4INT4Format("fp4int4"))}
