r"""The side-by-side benchmark of graphormer-sepnorm and the reference
Graphormer (``benchmarks/compare_reference.py``, its command line), one
file per job: :mod:`.inputs` (graphs, the reference's preprocessing),
:mod:`.timing` (per-graph and per-step times), :mod:`.rows` (what is
measured, row by row) and :mod:`.report` (the markdown report)."""
