r"""Building the models that ship inside the package
(:mod:`graphormer_sepnorm.bundled` is their registry): :mod:`.build` writes
the members and their cards from training runs, :mod:`.summary` the
READMEs' table of them, :mod:`.cli` is ``scripts/bundle_model.py``."""
