r"""What ``benchmarks/train_throughput.py`` (the command line) works with:
:mod:`.batches` builds a setting's training batches and recipe model,
:mod:`.steps` times training steps on them, :mod:`.baseline` measures
another git revision in alternating rounds, and :mod:`.report` writes the
markdown."""
