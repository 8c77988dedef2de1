"""Dataflow parsing: per-axis specs, Interstellar notation, replication, bijectivity errors."""
import pytest

from lego_build import ConfigError, compose
from lego_build.frontend.dataflow import arch_dataflows, interstellar_axes


def _dataflow(overrides):
    (df,) = arch_dataflows(compose(overrides).arch)
    return df


@pytest.mark.parametrize("text, family, axes", [
    ("C|K", "conv2d", ["ic", "oc"]),
    ("FY|Y", "conv2d", ["kh", "oh"]),
    ("C|K", "gemm", ["k", "n"]),
    ("C|K4X4", "conv2d", ["ic", "ow:4,oc:4"]),  # leftmost loop innermost
    ("[c|k, x2|y2]", "conv2d", ["ow:2,ic", "oh:2,oc"]),  # level 0 innermost
])
def test_interstellar_notation(text, family, axes):
    assert interstellar_axes(text, family, "w") == axes


def test_replication_gives_mixed_radix_virtual_coordinates():
    df = _dataflow(["arch=nvdla", "arch.dataflows.icoc.interstellar=C|K4X4"])
    assert df.axes == ((("ic", 16),), (("ow", 4), ("oc", 4)))
    assert df.to_virtual((3, 9)) == (3, 2, 1)  # column 9 = ow 2, oc 1
    assert df.spatial_strides() == (1, 1, 1)
    ms = dict(zip(df.dims, df.m_s()))
    assert ms["ow"] == (0, 1, 0) and ms["oc"] == (0, 0, 1)


def test_one_dim_on_both_axes_is_mixed_radix():
    df = _dataflow(["arch.dataflows.main.spatial=[m,m]"])
    assert df.extent("m") == 16 and df.spatial_strides() == (4, 1)


@pytest.mark.parametrize("overrides, message", [
    (["arch.dataflows.main.spatial=[m,'n:3']"], "extents multiply to 3, but the axis has 4 FUs"),
    (["arch.dataflows.main.spatial=[m,'n:8']"], "extents multiply to 8, but the axis has 4 FUs"),
    (["arch.dataflows.main.spatial=[m,'n,b']"], "give extents for all but one dim"),
    (["arch.dataflows.main.spatial=[m,'n:2,n:2']"], "dim 'n' twice on one axis"),
    (["arch.dataflows.main.spatial=[m,q]"], "dim 'q' is not a dim of this family"),
    (["arch.dataflows.main.temporal=[b,m,n]"], "dim 'k' has no loop"),
    (["arch.dataflows.main.temporal=[b,m,n,k,m]"], "dim 'm' has two loops"),
    (["arch=nvdla", "arch.dataflows.icoc.interstellar=C|K3X"], "extents 3 do not divide the axis size 16"),
])
def test_non_bijective_dataflows_name_the_dim(overrides, message):
    with pytest.raises(ConfigError) as err:
        _dataflow(overrides)
    assert message in str(err.value) and "\n" not in str(err.value)
