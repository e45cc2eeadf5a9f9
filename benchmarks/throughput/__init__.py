r"""What the prediction-speed benchmarks (``benchmarks/predict_throughput.py``,
``benchmarks/ensemble_throughput.py``) work with: :mod:`.measure` times a
command and its processes and describes the machine, :mod:`.sections`
measures our predictor, :mod:`.chemprop_peer` runs chemprop's ``predict``
beside it, and :mod:`.report` writes the markdown."""
