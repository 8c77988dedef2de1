"""``workload.kind=gemm_csv``: a CSV file of GEMM layers, one ``name,M,N,K`` row each."""
from __future__ import annotations

import csv
from pathlib import Path

from lego_build.analysis.importers.common import Importer
from lego_build.analysis.kernels import gemm
from lego_build.errors import ConfigError
from lego_build.ir.workload import Layer, Workload


def load(path: Path, name: str, batch: int, bits: int) -> Workload:
    layers = []
    with open(path, newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            try:
                m, n, k = (int(row[key]) for key in ("M", "N", "K"))
            except (KeyError, TypeError, ValueError):
                raise ConfigError(f"{path}:{line}: needs integer columns M, N, K") from None
            layers.append(Layer(row["name"], "gemm", gemm(m, n, k, batch, bits)))
    if not layers:
        raise ConfigError(f"{path}: no layers")
    return Workload(name, tuple(layers))


IMPORTER = Importer("gemm_csv", load, "give a CSV with a header name,M,N,K")
