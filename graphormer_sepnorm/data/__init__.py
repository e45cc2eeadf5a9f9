from .datasets import (DATASET_NAMES, DatasetInfo, GraphSplits,  # noqa: F401
                       dataset_info, load_splits, ogb_safe_load, prepare_raw,
                       target_statistics, write_molhiv_subset)
from .datamodule import (DeviceGraphStore, GraphBatchLoader,  # noqa: F401
                         GraphDataModule)
