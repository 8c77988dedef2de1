from lego_build.analysis.kernels import conv2d, gemm, mttkrp, ttmc
from lego_build.analysis.lowering import FAMILY_DIMS, lower
from lego_build.analysis.reuse import reuse_table


def test_gemm_maps_and_reduction():
    k = gemm(32, 24, 40)
    assert [d.name for d in k.dims] == ["b", "m", "n", "k"]
    assert k.tensor("A").index((0, 3, 5, 7)) == (0, 3, 7)
    assert k.tensor("B").index((0, 3, 5, 7)) == (0, 7, 5)
    assert k.output.index((0, 3, 5, 7)) == (0, 3, 5)
    assert [k.dims[d].name for d in k.reduction_dims] == ["k"]
    assert k.macs == 32 * 24 * 40


def test_conv2d_sliding_window_map_with_stride_and_padding():
    # ResNet-50 conv1: 224x224x3 -> 112x112x64, 7x7, stride 2, pad 3
    k = conv2d(1, 3, 64, 224, 224, 7, 7, stride=2, pad=3)
    assert {d.name: d.bound for d in k.dims} == {
        "n": 1, "g": 1, "oc": 64, "ic": 3, "oh": 112, "ow": 112, "kh": 7, "kw": 7}
    it = dict(n=0, g=0, oc=5, ic=2, oh=10, ow=4, kh=6, kw=0)
    x = k.tensor("X").index(tuple(it[d.name] for d in k.dims))
    assert x == (0, 2, 2 * 10 + 6 - 3, 2 * 4 + 0 - 3)
    assert k.macs == 118013952  # 112*112*64*3*49, the published conv1 MAC count


def test_grouped_and_dilated_conv_maps():
    k = conv2d(1, 32, 32, 10, 10, 3, 3, stride=1, pad=(2, 2, 2, 2), dilation=2, groups=32)  # depthwise
    b = {d.name: d.bound for d in k.dims}
    assert (b["g"], b["oc"], b["ic"], b["oh"]) == (32, 1, 1, 10)
    it = dict(n=0, g=7, oc=0, ic=0, oh=3, ow=1, kh=2, kw=1)
    order = tuple(it[d.name] for d in k.dims)
    assert k.tensor("X").index(order) == (0, 7, 3 + 2 * 2 - 2, 1 + 2 * 1 - 2)
    assert k.tensor("W").index(order) == (7, 0, 2, 1)
    assert k.output.index(order) == (0, 7, 3, 1)


def test_three_input_kernels():
    m = mttkrp(4, 5, 6, 7)
    assert len(m.inputs) == 3 and m.macs == 4 * 5 * 6 * 7
    assert [m.dims[d].name for d in m.reduction_dims] == ["k", "l"]
    t = ttmc(2, 3, 4, 5, 6)
    assert [t.dims[d].name for d in t.reduction_dims] == ["l", "m"]


def test_reuse_table_marks_sliding_windows_partial():
    table = reuse_table(conv2d(1, 16, 32, 14, 14, 3, 3, pad=1))
    assert table["X"]["oc"] == "full"
    assert table["X"]["oh"] == "partial" and table["X"]["kh"] == "partial"
    assert table["X"]["ic"] == "none"
    assert table["W"]["oh"] == "full" and table["W"]["kh"] == "none"
    assert table["Y"]["ic"] == "full" and table["Y"]["kh"] == "full" and table["Y"]["oc"] == "none"


def test_lowering_keeps_macs_and_family_dims():
    conv = conv2d(2, 16, 32, 14, 14, 3, 3, stride=2, pad=1, groups=4)
    as_gemm = lower(conv, "gemm")
    assert as_gemm.macs == conv.macs
    assert {d.name: d.bound for d in as_gemm.dims} == {"b": 4, "m": 2 * 7 * 7, "n": 8, "k": 4 * 9}
    fc = gemm(8, 1000, 2048, batch=3)
    as_conv = lower(fc, "conv2d")
    assert as_conv.macs == fc.macs and tuple(d.name for d in as_conv.dims) == FAMILY_DIMS["conv2d"]
    assert lower(mttkrp(2, 2, 2, 2), "gemm") is None
    assert lower(conv, "conv2d") is conv


def test_reuse_table_knows_when_windows_do_not_overlap():
    pointwise_s2 = reuse_table(conv2d(1, 16, 32, 14, 14, 1, 1, stride=2))
    assert pointwise_s2["X"]["oh"] == "none"
    alexnet_conv1 = reuse_table(conv2d(1, 3, 64, 224, 224, 11, 11, stride=4, pad=2))
    assert alexnet_conv1["X"]["oh"] == "partial" and alexnet_conv1["X"]["kw"] == "partial"
    grouped = reuse_table(conv2d(1, 16, 16, 8, 8, 3, 3, pad=1, groups=4))
    assert grouped["X"]["g"] == "none" and grouped["X"]["ic"] == "none"
