"""Timeloop problem YAML import: CNN-Layer -> conv2d, a GEMM problem -> gemm, errors name the file."""
import pytest

from lego_build.analysis.importers import load_model
from lego_build.analysis.kernels import conv2d, gemm
from lego_build.errors import ConfigError

CNN_LAYER = """
problem:
  shape:
    name: CNN-Layer
    dimensions: [C, M, R, S, N, P, Q]
    coefficients:
      - {name: Wstride, default: 1}
      - {name: Hstride, default: 1}
      - {name: Wdilation, default: 1}
      - {name: Hdilation, default: 1}
    data-spaces:
      - name: Weights
        projection: [[[C]], [[M]], [[R]], [[S]]]
      - name: Inputs
        projection: [[[N]], [[C]], [[R, Wdilation], [P, Wstride]], [[S, Hdilation], [Q, Hstride]]]
      - name: Outputs
        projection: [[[N]], [[M]], [[Q]], [[P]]]
        read-write: True
  instance: {C: 3, M: 96, R: 11, S: 11, N: 1, P: 55, Q: 55, Wstride: 4, Hstride: 4}
"""

GEMM = """
problem:
  shape:
    name: GEMM
    dimensions: [M, N, K]
    data-spaces:
      - {name: A, projection: [[[M]], [[K]]]}
      - {name: B, projection: [[[K]], [[N]]]}
      - {name: Z, projection: [[[M]], [[N]]], read-write: True}
  instance: {M: 64, N: 32, K: 128}
"""


def test_alexnet_conv1_from_timeloop_problem(tmp_path):
    path = tmp_path / "conv1.yaml"
    path.write_text(CNN_LAYER)
    (layer,) = load_model("timeloop", str(path), "conv1", 1, 8).layers
    # AlexNet conv1 without padding: 227x227 input, 11x11 stride 4 -> 55x55
    assert layer.kernel == conv2d(1, 3, 96, 227, 227, 11, 11, (4, 4), 0, (1, 1), 1, 8)
    assert layer.kernel.macs == 105_415_200


def test_gemm_problem(tmp_path):
    path = tmp_path / "gemm.yaml"
    path.write_text(GEMM)
    (layer,) = load_model("timeloop", str(path), "g", 1, 8).layers
    assert layer.kernel == gemm(64, 32, 128)
    with pytest.raises(ConfigError, match=r"^workload.batch=2: a Timeloop problem states its own sizes; set them "
                                          r"in gemm.yaml \(e.g. problem.instance.N\) instead$"):
        load_model("timeloop", str(path), "g", 2, 8)  # refused, not ignored


def test_generic_problem_keeps_its_projection(tmp_path):
    path = tmp_path / "tri.yaml"
    path.write_text(GEMM.replace("[[[K]], [[N]]]", "[[[K]], [[N], [M]]]"))
    (layer,) = load_model("timeloop", str(path), "g", 1, 8).layers
    assert layer.kernel.name == "timeloop:GEMM"
    b = layer.kernel.tensor("B")
    assert b.matrix == ((0, 0, 1), (1, 1, 0)) and b.shape == (128, 64 + 32 - 1)


@pytest.mark.parametrize("text, message", [
    ("problem: [1, 2", "not valid YAML"),
    ("foo: 1", "no problem.shape"),
    (GEMM.replace("M: 64", "M: -1"), "problem.instance.M=-1"),
    (GEMM.replace("read-write: True", ""), "exactly one read-write"),
    (GEMM.replace("[[[M]], [[K]]]", "[[[X]], [[K]]]"), "unknown dimension 'X'"),
])
def test_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_model("timeloop", str(path), "bad", 1, 8)
    assert str(err.value).startswith(f"workload.path={path}") and message in str(err.value)
    assert "\n" not in str(err.value)
