"""Preprocessing caches are named after the raw files they were built from:
other raw files never read an old cache (PyG's plain ZINC would), and going
back to the first raw files reuses its cache without processing again."""
import hashlib
import pickle
from pathlib import Path

import torch

from conftest import shared_path
from graphormer_sepnorm.data.datasets import graph_targets, load_splits
from graphormer_sepnorm.data.processed_cache import raw_fingerprint

GRAPHS = 30


def _write_small_zinc_raw(raw: Path) -> list:
    """The first GRAPHS real ZINC-subset val graphs (from ZINC-proxy) as all
    three splits, in PyG's raw layout; returns the graphs."""
    with open(shared_path('ZINC-proxy', 'raw', 'val.pickle'), 'rb') as f:
        graphs = pickle.load(f)[:GRAPHS]
    raw.mkdir(parents=True)
    for split in ('train', 'val', 'test'):
        with open(raw / f'{split}.pickle', 'wb') as f:
            pickle.dump(graphs, f)
        _write_index(raw / f'{split}.index', range(GRAPHS))
    return graphs


def _write_index(path: Path, ids) -> None:
    path.write_text(','.join(map(str, ids)) + '\n')


def test_other_raw_files_get_their_own_cache(tmp_path):
    raw = tmp_path / 'ZINC' / 'raw'
    graphs = _write_small_zinc_raw(raw)
    first = load_splits('zinc_subset', tmp_path)
    assert len(first.val) == GRAPHS
    (cache, ) = (tmp_path / 'ZINC' / 'subset').glob('processed-*')
    stamp = (cache / 'val.pt').stat().st_mtime_ns

    _write_index(raw / 'val.index', [7, 3, 11])  # other raw files
    second = load_splits('zinc_subset', tmp_path)
    assert len(second.val) == 3  # not the GRAPHS of the first cache
    expected = torch.cat([graphs[i]['logP_SA_cycle_normalized']
                          for i in (7, 3, 11)])
    assert torch.equal(graph_targets(second.val).view(-1), expected)
    assert len(list((tmp_path / 'ZINC' / 'subset').glob('processed-*'))) == 2

    _write_index(raw / 'val.index', range(GRAPHS))  # back to the first
    third = load_splits('zinc_subset', tmp_path)
    assert len(third.val) == GRAPHS
    assert (cache / 'val.pt').stat().st_mtime_ns == stamp  # reused as is
    assert torch.equal(third.val[5].spd, first.val[5].spd)


def test_fingerprint_covers_names_and_contents(tmp_path):
    a, b = tmp_path / 'a.index', tmp_path / 'b.index'
    a.write_text('0,1,2\n')
    b.write_text('0,1,2\n')
    digest = hashlib.sha256(b'a.index\x006\x000,1,2\n').hexdigest()[:12]
    assert raw_fingerprint([a]) == digest
    assert raw_fingerprint([b]) != raw_fingerprint([a])  # another name
    a.write_text('0,1,3\n')
    assert raw_fingerprint([a]) != digest  # another content
    assert raw_fingerprint([a, b]) != raw_fingerprint([b, a])


def test_molhiv_cache_is_named_after_all_six_raw_files(molhiv_root):
    load_splits('molhiv', molhiv_root)
    raw = molhiv_root / 'ogbg_molhiv' / 'raw'
    read_by_ogb = ['edge.csv.gz', 'node-feat.csv.gz', 'edge-feat.csv.gz',
                   'graph-label.csv.gz', 'num-node-list.csv.gz',
                   'num-edge-list.csv.gz']
    name = f'processed-{raw_fingerprint([raw / f for f in read_by_ogb])}'
    assert (molhiv_root / 'ogbg_molhiv' / name /
            'geometric_data_processed.pt').is_file()
