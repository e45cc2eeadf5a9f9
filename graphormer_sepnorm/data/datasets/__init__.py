r"""The training datasets: ZINC (full and 12k subset) through
:class:`torch_geometric.datasets.ZINC` and OGB :obj:`ogbg-molhiv` through
:class:`ogb.graphproppred.PygGraphPropPredDataset`, both preprocessed once by
:class:`~graphormer_sepnorm.transforms.AddShortestPaths` as a PyG
:obj:`pre_transform` (cached on disk, so later runs start in seconds).

Offline use: :func:`prepare_raw` copies the raw files from a read-only
folder (:obj:`data.raw_source`, *e.g.* ``../shared/data/ZINC-proxy`` or
``../shared/data/ogbg_molhiv``) into the writable root when they are missing
there, so neither PyG nor OGB tries to download. Raw files already in the
root must equal those of :obj:`data.raw_source` (:func:`check_raw_files`),
and each preprocessing cache is named after the raw files it was built from
(:mod:`~graphormer_sepnorm.data.processed_cache`), so raw files from two
sources are never mixed and a cache is never reused for other raw files.

ogb 1.3.6 loads its processed file with a bare :func:`torch.load`, which
fails under torch >= 2.6 (:obj:`weights_only=True` by default). Instead of
patching :func:`torch.load`, :func:`ogb_safe_load` allow-lists the four PyG
classes the file holds, only while the dataset is being constructed.

One file per job:

* :mod:`~.info`: :data:`DATASET_NAMES`, :func:`dataset_info` and
  :func:`data_info` (the :class:`DatasetInfo` of a built-in dataset or a
  CSV);
* :mod:`~.raw_files`: the dataset folders under the root and their raw
  files (:func:`check_raw_source`, :func:`check_raw_files`,
  :func:`prepare_raw`);
* :mod:`~.loading`: :func:`load_splits`, :func:`load_data_splits` and
  :func:`ogb_safe_load`;
* :mod:`~.targets`: :func:`graph_values`, :func:`graph_targets`,
  :func:`target_statistics` and :class:`TargetScaling`;
* :mod:`~.split_smiles`: :func:`~.split_smiles.split_molecules`, the
  SMILES of MolHIV's and ZINC's molecules by the ids of a run's
  predictions (imported where used: the run report);

:class:`DatasetInfo`, :class:`GraphSplits` and :func:`limit_splits` come
from :mod:`~graphormer_sepnorm.data.graph_splits`, below this package and
the CSV modules, which build them too; the CSV modules are imported only by
:func:`data_info` and :func:`load_data_splits`, never the other way round.
"""
from ..graph_splits import DatasetInfo, GraphSplits, limit_splits
from .info import DATASET_NAMES, data_info, dataset_info
from .loading import load_data_splits, load_splits, ogb_safe_load
from .raw_files import (DownloadError, RawFilesMismatchError,
                        check_raw_files, check_raw_source, dataset_dir,
                        prepare_raw)
from .targets import (TargetScaling, graph_targets, graph_values,
                      target_statistics)

__all__ = [
    'DATASET_NAMES', 'DatasetInfo', 'dataset_info', 'data_info',
    'dataset_dir', 'DownloadError', 'RawFilesMismatchError',
    'check_raw_source', 'check_raw_files', 'prepare_raw', 'ogb_safe_load',
    'GraphSplits', 'load_splits', 'load_data_splits', 'limit_splits',
    'graph_values', 'graph_targets', 'target_statistics', 'TargetScaling'
]
