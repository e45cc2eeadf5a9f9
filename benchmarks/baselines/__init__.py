r"""Baselines of other model families, trained on our benchmark splits
(:mod:`graphormer_sepnorm.data.molecule_splits`) and CPU budget. The
chemprop D-MPNN needs the optional extra (``pip install ".[baselines]"``);
:mod:`.chemprop_dmpnn` imports it only when used."""
