"""benchmarks/thesis_sweeps.py: seed 001's memory sweep through ``lego-build -m --task map``; on the
--quick grid (16 and 512 B RFs x 128 and 256 KB) the thesis's qualitative result holds."""
import json

import pytest

from benchmarks import thesis_sweeps


@pytest.mark.slow
@pytest.mark.long  # the benchmark reproduces it; its other tests run in CI
def test_quick_memory_sweep_reproduces_the_thesis_result(tmp_path):
    assert thesis_sweeps.main(["--quick", "--out", str(tmp_path / "r.json"), "--keep", str(tmp_path / "w")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    head = doc["figures"]["headline"]
    assert head["memory: small RFs (16-64 B) beat the 512 B RF at 128 and 256 KB"] is True
    assert head["memory: the best of them beats every 512 B configuration"] is True
    assert len(doc["figures"]["tables"][0]["rows"]) == 2
    assert not list((tmp_path / "w").glob("memory/out/*/rtl"))  # stopped after the map stage
