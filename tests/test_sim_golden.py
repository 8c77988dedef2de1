"""The golden model (lego_build.sim.golden): exact arithmetic on real shapes, the test-data
patterns, test data from a file, and the width bound it relies on (lego_build.analysis.widths)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from lego_build.analysis.kernels import conv2d, gemm, mttkrp
from lego_build.analysis.widths import reduction_length, required_acc_bits, worst_case_sum
from lego_build.ir.testdata import GENERATED
from lego_build.mapping.sim_tile import window
from lego_build.sim import golden as golden_mod
from lego_build.sim.golden import file_operands, golden, load_data_file, pattern_operands, random_operands, wrap_signed


def loops(kernel, data) -> dict[tuple[int, ...], int]:
    """The reference the golden model must equal: the loop nest in Python integers, no NumPy."""
    out: dict[tuple[int, ...], int] = {}
    for it in itertools.product(*(range(d.bound) for d in kernel.dims)):
        term = 1
        for t in kernel.inputs:
            idx = t.index(it)
            if all(0 <= i < s for i, s in zip(idx, t.shape)):
                term *= int(data[t.name][idx])
            else:
                term = 0
        key = kernel.output.index(it)
        out[key] = out.get(key, 0) + term
    return out


def assert_exact(kernel, data) -> np.ndarray:
    got = golden(kernel, data)
    for key, value in loops(kernel, data).items():
        assert int(got[key]) == value, (key, int(got[key]), value)
    return got


@pytest.mark.parametrize("pattern", GENERATED)
def test_golden_is_exact_on_a_long_int8_reduction(pattern):
    """K=512 int8: all-minimum operands sum to 512 * 128 * 128 = 2**23, one past what 24 bits hold."""
    kernel = gemm(2, 3, 512)
    got = assert_exact(kernel, pattern_operands(kernel, pattern, seed=4))
    if pattern == "min":
        assert (got == 512 * 128 * 128).all() and int(got.max()) == 2 ** 23
        assert required_acc_bits(kernel, 8) == 25  # 2**23 needs a 25-bit two's complement register


def test_golden_is_exact_on_a_padded_strided_conv_and_mttkrp():
    conv = conv2d(1, 3, 4, 9, 9, 3, 3, stride=2, pad=1)
    assert_exact(conv, pattern_operands(conv, "mixed"))
    assert_exact(conv, random_operands(conv, 2))
    tensor3 = mttkrp(3, 2, 4, 5)
    assert_exact(tensor3, pattern_operands(tensor3, "min"))


def test_golden_keeps_sums_past_64_bits_exact():
    """32-bit operands over K=64: sums reach 2**68, past int64; the model switches to Python ints."""
    kernel = gemm(2, 2, 64, bits=32)
    assert worst_case_sum(kernel, 32).bit_length() > 63
    got = assert_exact(kernel, pattern_operands(kernel, "min"))
    assert int(got[0, 0, 0]) == 64 * 2 ** 62


def test_a_wrapping_golden_model_would_hide_an_overflow():
    """The mutation the issue names: a golden model that wraps to the accumulator agrees with
    overflowed hardware. Exact and wrapped differ on every output of the K=512 extreme, so a
    comparison against the exact model catches a 24-bit accumulator (test_sim_simulate runs it in RTL)."""
    kernel = gemm(4, 4, 512)
    data = pattern_operands(kernel, "min")
    exact = golden(kernel, data)
    wrapped = wrap_signed(exact, 24)  # what a 24-bit accumulator holds, and what the old model returned
    assert (wrapped != exact).all() and (wrapped == -(2 ** 23)).all()


def test_patterns_reach_the_operand_extremes():
    kernel = gemm(3, 4, 5)
    a, b = (pattern_operands(kernel, "min")[t] for t in ("A", "B"))
    assert (a == -128).all() and (b == -128).all()
    assert (pattern_operands(kernel, "max")["A"] == 127).all()
    mixed = pattern_operands(kernel, "mixed")
    assert (mixed["A"] == -128).all() and (mixed["B"] == 127).all()
    alt = pattern_operands(kernel, "alternating")
    assert set(np.unique(alt["A"])) == {-128, 127} and alt["A"].ravel()[0] != alt["B"].ravel()[0]
    assert golden(kernel, mixed).max() == -5 * 128 * 127  # the most negative sum
    with pytest.raises(ValueError, match="unknown test-data pattern"):
        pattern_operands(kernel, "zeros")


def test_reduction_length_and_widths_of_real_layers():
    conv = conv2d(1, 256, 256, 14, 14, 3, 3, pad=1)  # a ResNet-50 layer3 conv: 2304-term sums
    assert reduction_length(conv) == 256 * 9
    assert required_acc_bits(conv, 8) == (2304 * 2 ** 14).bit_length() + 1 == 27
    depthwise = conv2d(1, 32, 32, 112, 112, 3, 3, pad=1, groups=32)
    assert reduction_length(depthwise) == 9
    assert required_acc_bits(mttkrp(4, 4, 32, 32), 8) == 33  # three operands: 1024 * 2**21 = 2**31


def test_file_operands_cut_the_tile_window(tmp_path):
    full = {"A": np.arange(40 * 8, dtype=np.int64).reshape(1, 40, 8) % 100 - 50,
            "B": np.ones((1, 8, 6), dtype=np.int64)}
    path = tmp_path / "ops.npz"
    np.savez(path, **{"fc/A": full["A"], "B": full["B"]})
    arrays = load_data_file(path)
    # the last 8 rows of the layer, as an edge tile sees them
    edge = gemm(8, 6, 8)
    edge = type(edge)(edge.name, edge.dims, tuple(
        t if t.name != "A" else type(t)(t.name, t.role, (1, 40, 8), t.matrix, (0, 32, 0), t.bits)
        for t in edge.tensors))
    tile, origin = window(edge)
    assert origin["A"] == (0, 32, 0) and tile.tensor("A").shape == (1, 8, 8)
    data = file_operands(tile, arrays, "fc", origin, str(path))
    assert (data["A"] == full["A"][:, 32:40, :]).all()
    assert (golden(tile, data) == golden(edge, {"A": full["A"], "B": full["B"]})).all()
    with pytest.raises(ValueError, match="no array other/A or A"):
        file_operands(tile, arrays, "other", origin, str(path))
    np.savez(path, A=np.full((1, 40, 8), 300), B=full["B"])
    with pytest.raises(ValueError, match="outside the 8-bit operand range"):
        file_operands(tile, load_data_file(path), "fc", origin, str(path))


def test_unreadable_data_files_name_the_file(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.npz: not a readable .npz"):
        load_data_file(bad)
    with pytest.raises(ValueError, match="missing.npz: no such file"):
        load_data_file(tmp_path / "missing.npz")
    np.savez(tmp_path / "float.npz", A=np.ones(3))
    with pytest.raises(ValueError, match="give integer arrays"):
        load_data_file(tmp_path / "float.npz")


def test_window_keeps_padding_and_far_offsets_small():
    """A tile at the end of a 10**9-row layer holds only its own rows (it used to allocate them all)."""
    layer = gemm(10 ** 9, 16, 16)
    shifted = type(layer)(layer.name, tuple(type(d)(d.name, 16 if d.name == "m" else d.bound) for d in layer.dims),
                          tuple(type(t)(t.name, t.role, t.shape, t.matrix,
                                        tuple(b + (10 ** 9 - 16 if i == 1 and t.name != "B" else 0)
                                              for i, b in enumerate(t.bias)), t.bits) for t in layer.tensors))
    tile, origin = window(shifted)
    assert tile.tensor("A").shape == (1, 16, 16) and origin["A"] == (0, 10 ** 9 - 16, 0)
    assert sum(t.size for t in tile.tensors) == 3 * 256
    conv = conv2d(1, 2, 2, 6, 6, 3, 3, pad=1)
    padded, where = window(conv)
    assert where["X"] == (0, 0, 0, 0) and padded.tensor("X").shape == conv.tensor("X").shape
    data = random_operands(padded, 3)
    assert (golden(padded, data) == golden(conv, data)).all()


def test_chunked_golden_equals_one_chunk(monkeypatch):
    kernel = conv2d(1, 4, 4, 8, 8, 3, 3, pad=1)
    data = random_operands(kernel, 9)
    whole = golden(kernel, data)
    monkeypatch.setattr(golden_mod, "CHUNK", 7)  # odd-sized chunks across every boundary
    assert (golden_mod.golden(kernel, data) == whole).all()
