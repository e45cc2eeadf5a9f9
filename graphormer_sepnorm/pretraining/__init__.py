r"""Self-supervised pretraining: the corpus, the objectives and the training
module, one file per job.

* :mod:`~.corpus`, :mod:`~.moses_wheel`, :mod:`~.exclusions`,
  :mod:`~.molecule_keys`: the MOSES corpus, canonical and deduplicated,
  without the benchmarks' validation and test molecules
  (``scripts/make_pretraining_corpus.py``);
* :mod:`~.corpus_dataset`: its SMILES as graphs made on the fly;
* :mod:`~.descriptors`: the graph-level targets (RDKit descriptors, no
  downstream label nor a formula of one);
* :mod:`~.objectives`: masked atoms and the descriptor loss;
* :mod:`~.lit_module`, :mod:`~.datamodule`, :mod:`~.run`: the Lightning
  run behind ``scripts/pretrain.py``
  (:mod:`graphormer_sepnorm.cli.pretrain`);
* :mod:`~.backbone`, :mod:`~.plots`: what a run leaves (the backbone to
  fine-tune with ``model.init_from``, its curves).

Nothing is imported here: the modules load RDKit, PyG and Lightning.
"""

__all__ = []
