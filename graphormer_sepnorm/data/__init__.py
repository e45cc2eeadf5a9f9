from .datasets import (DATASET_NAMES, DatasetInfo, GraphSplits,  # noqa: F401
                       data_info, dataset_info, load_data_splits, load_splits,
                       ogb_safe_load, prepare_raw, target_statistics,
                       write_molhiv_subset)
from .errors import DataError  # noqa: F401


def __getattr__(name):
    # Loaded on first use: the batching module imports Lightning and the CSV
    # dataset PyG, which prediction (featurize imports this package) never
    # needs.
    if name in ('DeviceGraphStore', 'GraphBatchLoader', 'GraphDataModule'):
        from . import datamodule
        return getattr(datamodule, name)
    if name == 'MoleculeCSVDataset':
        from .csv_dataset import MoleculeCSVDataset
        return MoleculeCSVDataset
    raise AttributeError(name)
