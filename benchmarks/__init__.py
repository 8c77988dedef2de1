"""The benchmarks: each module measures one claim, through :mod:`benchmarks.harness`, and writes
``benchmarks/results/<name>.json``; ``python -m benchmarks.docs`` makes ``docs/benchmarks.md`` from them."""
