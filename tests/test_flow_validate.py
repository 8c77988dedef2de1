import pytest

from lego_build import ConfigError, compose
from lego_build.flow.validate import validate


@pytest.mark.parametrize("overrides, key", [
    (["arch.spatial=[m,q]"], "arch.spatial[1]='q'"),
    (["arch.family=conv2d"], "arch.spatial[0]='m': arch.family=conv2d has no such dim"),
    (["workload=onnx", "workload.path=missing.onnx"], "workload.path=missing.onnx"),
])
def test_cross_group_errors_name_the_key(overrides, key):
    with pytest.raises(ConfigError) as err:
        validate(compose(overrides))
    assert key in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("overrides", [
    [],
    ["workload=conv2d"],  # lowered to GEMM by im2col
    ["workload=conv2d", "arch.family=conv2d", "arch.spatial=[oc,ow]"],
    ["workload=attention"],
    ["workload=mttkrp"],  # nothing maps on a GEMM array, but analysis must still run
    ["arch.spatial=[k,n]"],  # weight stationary: partial sums reduce across the array
])
def test_valid_combinations(overrides):
    validate(compose(overrides))
