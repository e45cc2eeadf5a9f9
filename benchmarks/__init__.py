r"""This repository's research tooling, kept out of the installable
package ``graphormer_sepnorm`` (which holds the library alone):

* :mod:`benchmarks.analysis`: the results tables and their verdicts, the
  comparisons, seed ensembles, tuning tables, plots and the graph-token
  geometry report that the READMEs' generated blocks come from;
* :mod:`benchmarks.baselines`: the chemprop D-MPNN harness;
* :mod:`benchmarks.bundling`: the builder and summary of the models that
  ship inside the package;
* :mod:`benchmarks.protocol`: the plans of ``benchmarks/cpu_protocol.py``
  and the artefacts it keeps of their runs.

The scripts beside these packages (``benchmarks/*.py``) and in ``scripts/``
import them with the repository root on ``sys.path``."""
