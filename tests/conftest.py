"""Shared fixtures: real molecules from ../shared/data (see its README).

Tests that need the shared data skip with a message naming the expected path
when it is missing; CI always has it beside the checkout.
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

# A run takes the idle cores as torch threads (training/hardware.py), a
# count that follows the machine's load; the tests keep torch's own count,
# fixed for the session (and passed on to the scripts they run), so that a
# run and its resumed twin compute alike.
os.environ.setdefault('OMP_NUM_THREADS', str(torch.get_num_threads()))

REPO = Path(__file__).resolve().parents[1]
# The research tooling (benchmarks.analysis, .baselines, .bundling) is
# imported from the repository root, as the scripts do.
sys.path.insert(0, str(REPO))
SHARED_DATA = Path(
    os.environ.get('GRAPHORMER_SHARED_DATA', REPO.parent / 'shared' / 'data'))


#: Set to an integer, runs the collected tests in an order shuffled with
#: that seed (module- and session-scoped fixtures are then built again
#: where their tests are apart), to find tests that depend on their order.
SHUFFLE_ENV = 'GRAPHORMER_TEST_SHUFFLE'


#: The slowest test files, slowest first (their times are in
#: benchmarks/results/test_suite_time.md). They are collected first, so that
#: the pytest-xdist workers, which take whole files in collection order,
#: start the longest ones first and finish close together
#: (longest-processing-time-first scheduling); the other files keep their
#: order after them.
SLOWEST_FIRST = ('test_readme_blocks.py', 'pretraining/test_run.py',
                 'models/test_compile.py',
                 'training/test_train_e2e.py', 'test_installed_command.py',
                 'training/test_precise_bn.py',
                 'training/test_molecule_features.py',
                 'training/test_layer_lr.py')


def pytest_collection_modifyitems(session, config, items):
    seed = os.environ.get(SHUFFLE_ENV)
    if seed:
        import random
        random.Random(int(seed)).shuffle(items)
        return
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}

    def file_rank(item) -> int:
        try:
            name = item.path.relative_to(REPO / 'tests').as_posix()
        except ValueError:  # a test outside tests/
            return len(rank)
        return rank.get(name, len(rank))

    items.sort(key=file_rank)


#: Set (to anything) to print each failure's traceback the moment it
#: fails, not only in the summary: benchmarks/gpu_check.py sets it, since a
#: step that runs out of time ends before pytest's summary.
FAILURES_AT_ONCE_ENV = 'GRAPHORMER_PRINT_FAILURES_AT_ONCE'


def pytest_runtest_logreport(report):
    # Under xdist this runs in the controller too, whose output is the
    # run's output.
    if report.failed and os.environ.get(FAILURES_AT_ONCE_ENV):
        print(f"\n--- {report.nodeid} failed ({report.when}):\n"
              f"{report.longreprtext}\n---", flush=True)


def pytest_report_header(config):
    seed = os.environ.get(SHUFFLE_ENV)
    return f'tests shuffled with seed {seed} ({SHUFFLE_ENV})' if seed else []


@pytest.fixture(autouse=True)
def _log_handlers_on_an_open_stream():
    """Lightning, torchmetrics and others add a StreamHandler bound to
    ``sys.stderr`` when first imported. A test that imports them under
    ``capsys`` binds it to that test's capture stream, closed after the
    test: every later log record would print '--- Logging error ---' and a
    traceback into whatever test runs next, so tests would depend on their
    order. Before each test, such handlers are bound to the current
    ``sys.stderr``."""
    import logging
    loggers = [logging.getLogger(), *(
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if type(handler) is logging.StreamHandler and getattr(
                    handler.stream, 'closed', False):
                # Not setStream, which flushes the closed stream first.
                handler.stream = sys.stderr


def shared_path(*parts: str) -> Path:
    """A path under the shared data folder, or a skip naming it."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set "
                    f"GRAPHORMER_SHARED_DATA to the folder holding ZINC/, "
                    f"ZINC-proxy/, ogbg_molhiv/ and zinc250k/)")
    return path


def load_real_zinc(split: str = 'val', limit: int = None) -> list[Data]:
    """Real ZINC-subset graphs (PyG featurization: x [n, 1] atom type,
    edge_attr [E] bond type 1..3, y penalized logP)."""
    arrays = np.load(
        shared_path('ZINC', 'subset_partial_pyg', f'{split}_arrays.npz'))
    x_ptr, edge_ptr = arrays['x_ptr'], arrays['edge_ptr']
    count = len(x_ptr) - 1 if limit is None else min(limit, len(x_ptr) - 1)
    graphs = []
    for g in range(count):
        nodes = slice(x_ptr[g], x_ptr[g + 1])
        edges = slice(edge_ptr[g], edge_ptr[g + 1])
        graphs.append(
            Data(x=torch.from_numpy(arrays['x'][nodes]).long(),
                 edge_index=torch.from_numpy(
                     arrays['edge_index'][:, edges]).long(),
                 edge_attr=torch.from_numpy(arrays['edge_attr'][edges]).long(),
                 y=torch.tensor([float(arrays['y'][g])])))
    return graphs


def bucket_slices(padded_bias: torch.Tensor, tokens) -> list[torch.Tensor]:
    """The bias of each bucket of ``tokens`` (a PackedTokens), cut from the
    padded bias ``[batch_size, heads, 1 + N, 1 + N]`` by hand: the bucket's
    graphs in sorted order, its own length."""
    slices, start = [], 0
    order = torch.argsort(tokens.graph_index)  # Graphs in packed order.
    for count, length in tokens.buckets:
        graphs = order[start:start + count]
        slices.append(padded_bias[graphs, :, :length, :length])
        start += count
    assert start == padded_bias.size(0)
    return slices


def laid_out(batch, num_buckets: int = 1, multi_hop_max_dist: int = 20):
    """``batch`` with its BatchLayout, and the PackedTokens of it."""
    from graphormer_sepnorm.nn import PackedTokens
    from graphormer_sepnorm.transforms import add_batch_layout
    batch = add_batch_layout(batch, num_buckets, multi_hop_max_dist)
    return batch, PackedTokens(batch.layout)


@pytest.fixture(scope='session')
def zinc_val_graphs() -> list[Data]:
    return load_real_zinc('val')


@pytest.fixture(scope='session')
def molhiv_smiles() -> list[str]:
    """SMILES of the MolHIV molecules, in dataset order."""
    import gzip
    path = shared_path('ogbg_molhiv', 'mapping', 'mol.csv.gz')
    with gzip.open(path, 'rt') as f:
        next(f)
        return [line.split(',')[1] for line in f]


@pytest.fixture(scope='session')
def zinc_root(tmp_path_factory):
    """A writable data root with the ZINC-subset stand-in of
    ../shared/data/ZINC-proxy processed once per session (about 15 s):
    ``(root, raw_source)``."""
    from graphormer_sepnorm.data.datasets import load_splits
    source = shared_path('ZINC-proxy')
    root = tmp_path_factory.getbasetemp() / 'graphormer_data'
    root.mkdir(exist_ok=True)
    load_splits('zinc_subset', root, raw_source=source)
    return root, source


@pytest.fixture(scope='session')
def zinc_val(zinc_root):
    """The validation split of the ZINC-subset stand-in in ``zinc_root``
    (the cached graphs)."""
    from graphormer_sepnorm.data.datasets import load_splits
    root, source = zinc_root
    return load_splits('zinc_subset', root, raw_source=source).val


@pytest.fixture(scope='session')
def molhiv_root(tmp_path_factory):
    """A small MolHIV copy in OGB's layout (200/100/100 molecules of the real
    scaffold splits): all 41,127 molecules take about a minute to process on
    two cores, too slow for CI."""
    from molhiv_subset import write_molhiv_subset
    source = shared_path('ogbg_molhiv')
    root = tmp_path_factory.getbasetemp() / 'molhiv_small'
    if not (root / 'ogbg_molhiv').is_dir():
        write_molhiv_subset(source, root)
    return root


@pytest.fixture(scope='session')
def zinc_property_frame():
    """200 real ZINC molecules (the first rows of ZINC-proxy's real
    validation split) with two regression targets and missing labels:
    ``y``, the real normalized penalized logP (empty on every 7th row), and
    ``logp``, RDKit's Crippen logP (empty on every 3rd row; rows 0, 21, ...
    have neither)."""
    import pandas as pd
    from rdkit import Chem
    from rdkit.Chem import Crippen
    frame = pd.read_csv(shared_path('ZINC-proxy', 'smiles', 'val.csv'),
                        nrows=200)
    frame['logp'] = [Crippen.MolLogP(Chem.MolFromSmiles(s))
                     for s in frame['smiles']]
    frame.loc[frame.index % 3 == 0, 'logp'] = None
    frame.loc[frame.index % 7 == 0, 'y'] = None
    return frame


@pytest.fixture(scope='session')
def molhiv_frame():
    """200 real MolHIV molecules with their label ``HIV_active``: the
    file's first 170 inactive and first 30 active molecules, in file
    order."""
    import gzip

    import pandas as pd
    with gzip.open(shared_path('ogbg_molhiv', 'mapping', 'mol.csv.gz'),
                   'rt') as f:
        frame = pd.read_csv(f, usecols=['smiles', 'HIV_active'])
    actives = frame[frame['HIV_active'] == 1].head(30)
    rest = frame[frame['HIV_active'] == 0].head(170)
    return pd.concat([rest, actives]).sort_index().reset_index(drop=True)


@pytest.fixture
def zinc_csv_with_bad_rows(zinc_property_frame, tmp_path):
    """``zinc_property_frame`` written to ``molecules.csv``, followed by four
    rows that cannot be used: an unparsable SMILES (line 202), silicon,
    outside the ZINC vocabulary (203), a 60-atom chain, above
    ``max_nodes=40`` (204), and an empty SMILES (205). Returns the path and
    the frame written."""
    import pandas as pd
    bad = pd.DataFrame([('c1ccccc1(', 1.0, 2.0), ('C[Si](C)(C)C', 1.0, None),
                        ('C' * 60, None, 3.0), ('', 1.0, 1.0)],
                       columns=['smiles', 'y', 'logp'])
    frame = pd.concat([zinc_property_frame, bad], ignore_index=True)
    path = tmp_path / 'molecules.csv'
    frame.to_csv(path, index=False)
    return path, frame


@pytest.fixture(scope='session')
def installed_package(tmp_path_factory):
    """This checkout as ``pip install`` gives it to a user: a wheel installed
    into a new environment (see installed_package.py)."""
    from installed_package import install_wheel
    return install_wheel(tmp_path_factory.mktemp('installed'))
