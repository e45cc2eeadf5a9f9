from .datasets import (DATASET_NAMES, DatasetInfo, GraphSplits,  # noqa: F401
                       data_info, dataset_info, load_data_splits, load_splits,
                       ogb_safe_load, prepare_raw, target_statistics,
                       write_molhiv_subset)
from .errors import DataError  # noqa: F401


def __getattr__(name):
    # Loaded on first use: the batching module imports Lightning and the CSV
    # dataset PyG, which prediction (featurize imports this package) never
    # needs.
    if name == 'DeviceGraphStore':
        from .graph_store import DeviceGraphStore
        return DeviceGraphStore
    if name == 'GraphBatchLoader':
        from .batch_loader import GraphBatchLoader
        return GraphBatchLoader
    if name == 'GraphDataModule':
        from .datamodule import GraphDataModule
        return GraphDataModule
    if name == 'MoleculeCSVDataset':
        from .csv_dataset import MoleculeCSVDataset
        return MoleculeCSVDataset
    raise AttributeError(name)
