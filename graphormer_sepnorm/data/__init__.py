r"""Datasets, featurizers, molecule graphs and batching. Each public name
loads its module on first use (PEP 562): PyG, Lightning and RDKit load only
when a dataset, a batch or a featurizer is asked for."""
from ..lazy_imports import lazy_getattr

_HOMES = {
    **dict.fromkeys(('DATASET_NAMES', 'DatasetInfo', 'GraphSplits',
                     'data_info', 'dataset_info', 'load_data_splits',
                     'load_splits', 'ogb_safe_load', 'prepare_raw',
                     'target_statistics'),
                    '.datasets'),
    'DataError': '.errors',
    'DeviceGraphStore': '.graph_store',
    'GraphBatchLoader': '.batch_loader',
    'GraphormerDataLoader': '.graphormer_loader',
    'LayoutCollater': '.graphormer_loader',
    'GraphDataModule': '.datamodule',
    'MoleculeCSVDataset': '.csv_dataset',
}

__getattr__ = lazy_getattr(__name__, _HOMES)
