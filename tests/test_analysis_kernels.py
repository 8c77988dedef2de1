from lego_build.analysis.kernels import conv2d, gemm
from lego_build.analysis.reuse import reuse_table


def test_gemm_maps_and_reduction():
    k = gemm(32, 24, 40)
    assert [d.name for d in k.dims] == ["m", "n", "k"]
    assert k.tensor("A").index((3, 5, 7)) == (3, 7)
    assert k.tensor("B").index((3, 5, 7)) == (7, 5)
    assert k.output.index((3, 5, 7)) == (3, 5)
    assert [k.dims[d].name for d in k.reduction_dims] == ["k"]
    assert k.macs == 32 * 24 * 40


def test_conv2d_sliding_window_map_with_stride_and_padding():
    # ResNet-50 conv1: 224x224x3 -> 112x112x64, 7x7, stride 2, pad 3
    k = conv2d(1, 3, 64, 224, 224, 7, 7, stride=2, pad=3)
    assert {d.name: d.bound for d in k.dims} == {"n": 1, "k": 64, "c": 3, "oh": 112, "ow": 112, "kh": 7, "kw": 7}
    it = dict(n=0, k=5, c=2, oh=10, ow=4, kh=6, kw=0)
    order = [d.name for d in k.dims]
    x = k.tensor("X").index(tuple(it[d] for d in order))
    assert x == (0, 2, 2 * 10 + 6 - 3, 2 * 4 + 0 - 3)
    assert k.macs == 118013952  # 112*112*64*3*49, the published conv1 MAC count


def test_reuse_table_marks_sliding_windows_partial():
    table = reuse_table(conv2d(1, 16, 32, 14, 14, 3, 3, pad=1))
    assert table["X"]["k"] == "full"
    assert table["X"]["oh"] == "partial" and table["X"]["kh"] == "partial"
    assert table["X"]["c"] == "none"
    assert table["W"]["oh"] == "full" and table["W"]["kh"] == "none"
    assert table["Y"]["c"] == "full" and table["Y"]["kh"] == "full" and table["Y"]["k"] == "none"
