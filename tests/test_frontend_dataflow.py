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
    (["arch.dataflows.main.temporal=[b,m,n,k,m]"], "dim 'm' needs exactly one loop without a trip count"),
    (["arch=nvdla", "arch.dataflows.icoc.interstellar=C|K3X"], "extents 3 do not divide the axis size 16"),
])
def test_non_bijective_dataflows_name_the_dim(overrides, message):
    with pytest.raises(ConfigError) as err:
        _dataflow(overrides)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_multi_level_temporal_dataflow_builds_m_t_with_tiles():
    from lego_build.analysis.kernels import conv2d
    from lego_build.frontend.links import temporal_loops

    df = _dataflow(["arch=shidiannao", "arch.dataflows.ohow.temporal=[n,g,oc,ic,oh,ow,kh,kw,'ic:4']"])
    assert df.temporal[-1] == ("ic", 4) and df.loop_order == ("n", "g", "oc", "ic", "oh", "ow", "kh", "kw")
    loops = temporal_loops(conv2d(1, 16, 8, 10, 10, 3, 3, 1, 1), df)
    assert loops[3] == ("ic", 4, 4) and loops[-1] == ("ic", 4, 1)  # 4 outer trips of 4 inner channels
    assert loops[4] == ("oh", 2, 8)  # 10 output rows over 8 FUs: 2 tiles


@pytest.mark.parametrize("temporal, message", [
    ("[n,g,oc,ic,oh,ow,kh,kw,'ic:0']", "trip count '0' of dim 'ic'"),
    ("[n,g,oc,oh,ow,kh,kw,'ic:4']", "dim 'ic' needs exactly one loop without a trip count"),
    ("[n,g,oc,ic,oh,ow,kh,kw,ic]", "dim 'ic' needs exactly one loop without a trip count"),
])
def test_multi_level_temporal_must_stay_bijective(temporal, message):
    with pytest.raises(ConfigError, match=message):
        _dataflow(["arch=shidiannao", f"arch.dataflows.ohow.temporal={temporal}"])
