"""benchmarks/quant_fus.py: Table 6.3's FUs synthesised, the paper's area rankings checked."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import quant_fus  # noqa: E402

pytestmark = pytest.mark.slow


def test_int8_and_mx_arrays_rank_as_the_paper_reports(capsys):
    assert quant_fus.main(["--only", "int8", "vsq_int4", "mx4", "mx6", "mx9"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert set(rows) >= {"int8", "vsq_int4", "mx4", "mx6", "mx9"}
    assert "INT8 larger than every 4-bit format (vsq_int4, mx4): yes" in out
    assert "MX9 > MX6 > MX4: yes" in out
    # an array of 1024 MACs: 64 copies of a 16-element FU, so the array is 64x the FU
    fu, array = (int(rows["int8"].split("|")[k].strip().replace(",", "")) for k in (8, 9))
    assert array == 64 * fu > 0
