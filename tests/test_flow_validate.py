import pytest

from lego_build import ConfigError, compose
from lego_build.flow.validate import validate


@pytest.mark.parametrize("overrides, key", [
    (["workload=conv2d"], "arch.spatial[0]='m'"),
    (["arch.spatial=[m,k]"], "arch.spatial[1]='k' is a reduction dim"),
    (["workload.M=4096", "workload.K=64", "arch.buffer_depth=1024"], "arch.buffer_depth=1024"),
])
def test_cross_group_errors_name_the_key(overrides, key):
    with pytest.raises(ConfigError) as err:
        validate(compose(overrides))
    assert key in str(err.value)
    assert "\n" not in str(err.value)


def test_defaults_and_conv_on_output_dims_are_valid():
    validate(compose([]))
    validate(compose(["workload=conv2d", "arch.spatial=[k,ow]", "arch.buffer_depth=16384"]))
