r"""What ``benchmarks/cpu_protocol.py`` (the command line: datasets
prepared once, runs side by side) works with: :mod:`.plan` reads a plan
file into its runs (and checks a ``--trials``/``--seeds`` selection),
:mod:`.artefacts` keeps a finished run's artefacts and records the code's
commit (refusing a dirty tree for a final plan)."""
