"""Datasets (ZINC via PyG, MolHIV via OGB with the scoped weights_only
workaround), raw-file copying and the preprocessing cache."""
import pickle
import shutil
import time

import pytest
import torch

from conftest import shared_path
from graphormer_sepnorm.data.datasets import (RawFilesMismatchError,
                                              check_raw_source, TargetScaling,
                                              graph_targets, load_splits,
                                              ogb_safe_load, prepare_raw,
                                              target_statistics)


@pytest.fixture(scope='module')
def zinc(zinc_root):
    root, source = zinc_root
    return load_splits('zinc_subset', root, raw_source=source), root, source


def test_zinc_splits_and_cached_second_load(zinc):
    splits, root, source = zinc
    assert [len(splits[s]) for s in ('train', 'val', 'test')] == [
        10000, 1000, 1000]
    graph = splits.val[0]
    assert graph.spd.numel() == graph.num_nodes**2
    assert splits.info.task == 'regression' and splits.info.metric == 'mae'
    start = time.perf_counter()
    again = load_splits('zinc_subset', root, raw_source=source,
                        limit_train=100)
    assert time.perf_counter() - start < 5  # the pre_transform is cached
    assert len(again.train) == 100
    assert torch.equal(again.val[5].path_next, splits.val[5].path_next)
    # The real subset val split (ZINC-proxy val = real val)
    y = graph_targets(splits.val)
    assert y.shape == (1000, ) and abs(float(y.mean()) - 0.0315) < 1e-3


def test_target_statistics_come_from_the_training_split(zinc):
    splits, _, _ = zinc
    (mean, ), (std, ) = target_statistics(splits.train)  # one target
    y = torch.stack([splits.train[i].y for i in range(len(splits.train))])
    assert mean == pytest.approx(float(y.double().mean()), abs=1e-9)
    assert std == pytest.approx(float(y.double().std()), rel=1e-9)


def test_target_statistics_per_target_skip_missing_labels():
    from torch_geometric.data import Data, InMemoryDataset

    class Targets(InMemoryDataset):
        def __init__(self, y):
            super().__init__()
            self.data, self.slices = self.collate(
                [Data(x=torch.zeros(1, 1), y=row.view(1, -1)) for row in y])

    nan = float('nan')
    y = torch.tensor([[1.0, nan, 5.0], [3.0, 2.0, 5.0], [nan, 4.0, 5.0],
                      [8.0, nan, 5.0]])
    mean, std = target_statistics(Targets(y))
    assert mean == pytest.approx([4.0, 3.0, 5.0])
    # Sample standard deviations ((9 + 1 + 16) / 2 = 13); a constant target
    # keeps 1
    assert std == pytest.approx([13**0.5, 2**0.5, 1.0])


def test_target_scaling_maps_each_target_back_with_its_own_statistics():
    values = torch.tensor([[0.5, -1.0], [2.0, 0.0]], dtype=torch.float64)
    scaling = TargetScaling([1.0, -2.0], [2.0, 0.5])
    # 0.5 * 2 + 1, -1 * 0.5 - 2; 2 * 2 + 1, 0 * 0.5 - 2.
    expected = torch.tensor([[2.0, -2.5], [5.0, -2.0]], dtype=torch.float64)
    assert torch.equal(scaling(values), expected)
    # Standardizing with the same statistics and back is the identity.
    assert torch.equal(scaling(scaling.standardize(expected)), expected)
    # In float32 the statistics are rounded as a float32 tensor made from
    # the Python numbers is: (y - 0.1) / 0.3, written out.
    scaling = TargetScaling(0.1, 0.3)
    y = torch.tensor([1.0, 2.0])
    assert scaling.standardize(y).dtype == torch.float32
    assert torch.equal(scaling.standardize(y),
                       (y - torch.tensor(0.1)) / torch.tensor(0.3))


def test_prepare_raw_copies_missing_files_only(tmp_path):
    source = shared_path('ZINC-proxy')
    target = prepare_raw('zinc_subset', tmp_path, source)
    assert target == tmp_path / 'ZINC'
    assert sorted(p.name for p in (target / 'raw').iterdir()) == sorted(
        ['train.pickle', 'val.pickle', 'test.pickle', 'train.index',
         'val.index', 'test.index'])
    (target / 'raw' / 'test.pickle').unlink()
    prepare_raw('zinc_subset', tmp_path, source)
    assert (target / 'raw' / 'test.pickle').read_bytes() == (
        source / 'raw' / 'test.pickle').read_bytes()
    with pytest.raises(FileNotFoundError, match='lacks the PyG ZINC raw'):
        check_raw_source('zinc', shared_path('zinc250k'))


def test_raw_files_that_differ_from_raw_source_are_kept_and_refused(
        tmp_path):
    source = shared_path('ZINC-proxy')
    raw = prepare_raw('zinc_subset', tmp_path, source) / 'raw'
    (raw / 'val.index').write_text('0,1,2\n')
    (raw / 'train.pickle').unlink()
    with pytest.raises(RawFilesMismatchError,
                       match=rf'\(raw/val.index\); remove {raw} or choose'):
        prepare_raw('zinc_subset', tmp_path, source)
    assert (raw / 'val.index').read_text() == '0,1,2\n'  # never overwritten
    assert not (raw / 'train.pickle').exists()  # nothing copied beside it


def test_index_files_past_the_end_of_the_pickles(tmp_path):
    """The real ZINC index files (positions in the full 220k-graph
    pickles) beside the 10k stand-in pickles, without data.raw_source: a
    message naming the raw folder instead of PyG's bare IndexError."""
    raw = tmp_path / 'ZINC' / 'raw'
    raw.mkdir(parents=True)
    for name in ('train', 'val', 'test'):
        shutil.copyfile(shared_path('ZINC', 'raw', f'{name}.index'),
                        raw / f'{name}.index')
        shutil.copyfile(shared_path('ZINC-proxy', 'raw', f'{name}.pickle'),
                        raw / f'{name}.pickle')
    with pytest.raises(RawFilesMismatchError,
                       match=rf'index files in {raw} point past the end'):
        load_splits('zinc_subset', tmp_path)


def test_molhiv_loads_twice_without_touching_torch_load(molhiv_root):
    """ogb 1.3.6 reloads its processed file with a bare torch.load, which
    fails under torch >= 2.6; ogb_safe_load allow-lists PyG's classes only
    while the dataset is built. The second load reads the processed cache."""
    from ogb.graphproppred import PygGraphPropPredDataset
    load_before = torch.load
    globals_before = set(torch.serialization.get_safe_globals())

    first = load_splits('molhiv', molhiv_root)  # processes (or reuses)
    processed = next((molhiv_root / 'ogbg_molhiv').glob(
        'processed-*')) / 'geometric_data_processed.pt'
    assert processed.is_file()
    start = time.perf_counter()
    second = load_splits('molhiv', molhiv_root)  # from the cache
    assert time.perf_counter() - start < 5
    assert [len(second[s]) for s in ('train', 'val', 'test')] == [200, 100,
                                                                  100]
    assert torch.equal(first.val[3].x, second.val[3].x)
    assert second.info.task == 'binary' and second.info.metric == 'rocauc'
    for split in ('train', 'val', 'test'):  # both classes in every split
        assert graph_targets(second[split]).unique().tolist() == [0, 1]

    # Nothing global changed: same torch.load, same allow-list, and the
    # default (weights_only=True) still refuses the file.
    assert torch.load is load_before
    assert set(torch.serialization.get_safe_globals()) == globals_before
    with pytest.raises(pickle.UnpicklingError):
        torch.load(processed)
    with pytest.raises(pickle.UnpicklingError):  # ogb alone still fails
        PygGraphPropPredDataset('ogbg-molhiv', root=str(molhiv_root))
    with ogb_safe_load():
        data, slices = torch.load(processed)
    assert 'spd' in slices


def test_molhiv_subset_keeps_the_original_molecules(molhiv_root):
    import gzip
    source = shared_path('ogbg_molhiv')

    def column(folder, name):
        with gzip.open(folder / name, 'rt') as f:
            return [int(line.split(',')[0]) for line in f]

    original_val = column(source, 'split/scaffold/valid.csv.gz')
    nodes = column(source, 'raw/num-node-list.csv.gz')
    labels = column(source, 'raw/graph-label.csv.gz')
    splits = load_splits('molhiv', molhiv_root)
    small_nodes = [splits.val[i].num_nodes for i in range(len(splits.val))]
    small_y = graph_targets(splits.val).view(-1).tolist()
    # The small val split is a subsequence of the real one.
    pairs = [(nodes[i], labels[i]) for i in original_val]
    it = iter(pairs)
    assert all(pair in it for pair in zip(small_nodes, small_y))
