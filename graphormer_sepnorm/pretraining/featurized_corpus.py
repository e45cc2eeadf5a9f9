r"""The pretraining corpus featurized once, into memory
(:obj:`pretrain.in_memory`): for a GPU that on-the-fly featurization
(:class:`~graphormer_sepnorm.pretraining.corpus_dataset.SmilesCorpus` in
DataLoader workers) cannot keep busy.

Every line is featurized by :meth:`SmilesCorpus.line_graph
<graphormer_sepnorm.pretraining.corpus_dataset.SmilesCorpus.line_graph>`, so
the items are the on-the-fly ones, in chunks of consecutive lines spread over
spawned worker processes. The graphs are kept collated, as PyG's
:class:`~torch_geometric.data.InMemoryDataset` keeps its slices: one array
per graph attribute, concatenated over the molecules along the dimension PyG
batches it on, and each molecule's offsets in it. Memory is then a few large
arrays rather than millions of Python objects, which forked DataLoader
workers share (touching a Python object writes its reference count, which
copies its memory page into the worker). Integer attributes are held in the
narrowest integer type that holds their values (node features, edge indices
and path lengths are small numbers) and come back in their own type.
"""
from __future__ import annotations

import math
import multiprocessing
import time
import warnings
from typing import Iterator, NamedTuple, Optional

import numpy as np
import torch
from torch_geometric.data import Data

from ..data.featurize import FeaturizationError
from .corpus_dataset import SmilesCorpus

__all__ = ['FeaturizedCorpus']

#: Lines a worker featurizes at a time: a few seconds of work, so that the
#: progress bar moves and the processes finish together.
CHUNK_SIZE = 2000


class _Chunk(NamedTuple):
    r"""The graphs of consecutive lines, as a worker sends them back: per
    attribute, the graphs' arrays concatenated along :obj:`layout`'s
    dimension and each graph's extent along it, and the lines that could not
    be featurized, with why."""
    arrays: dict[str, np.ndarray]
    sizes: dict[str, np.ndarray]
    layout: dict[str, tuple[int, np.dtype]]
    failed: list[tuple[int, str]]


def _narrowed(array: np.ndarray) -> np.ndarray:
    r"""An integer :obj:`array` in the narrowest signed type holding its
    values (chunks narrowed differently concatenate into the wider type);
    any other array as it is."""
    if array.dtype.kind not in 'iu':
        return array
    if not array.size:
        return array.astype(np.int8)
    low, high = array.min(), array.max()
    for dtype in (np.int8, np.int16, np.int32):
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
            return array.astype(dtype)
    return array


def _featurize_lines(source: SmilesCorpus, start: int, stop: int) -> _Chunk:
    graphs, failed = [], []
    for position in range(start, stop):
        try:
            graphs.append(source.line_graph(position))
        except FeaturizationError as error:
            failed.append((position, str(error)))
    arrays, sizes, layout = {}, {}, {}
    for key, value in (graphs[0].items() if graphs else ()):
        if key == 'num_nodes':  # an int: the rows of x (prepared_data)
            continue
        dim = graphs[0].__cat_dim__(key, value) % value.dim()
        parts = [graph[key].numpy() for graph in graphs]
        arrays[key] = _narrowed(np.concatenate(parts, axis=dim))
        sizes[key] = np.array([part.shape[dim] for part in parts],
                              dtype=np.int64)
        layout[key] = (dim, parts[0].dtype)
    return _Chunk(arrays, sizes, layout, failed)


# In the worker processes: the corpus, sent once by the pool's initializer.
_SOURCE: Optional[SmilesCorpus] = None


def _start_worker(source: SmilesCorpus) -> None:
    global _SOURCE
    _SOURCE = source


def _featurize_in_worker(bounds: tuple[int, int]) -> _Chunk:
    assert _SOURCE is not None, "the pool's initializer did not run"
    return _featurize_lines(_SOURCE, *bounds)


def _chunks(source: SmilesCorpus, bounds: list[tuple[int, int]],
            processes: int) -> Iterator[_Chunk]:
    if processes == 1:
        for start, stop in bounds:
            yield _featurize_lines(source, start, stop)
        return
    # Spawned, not forked: this runs inside a training run, whose threads
    # (OpenMP's, Lightning's) may hold locks a forked child would inherit
    # held; forked pools were seen to hang there.
    with multiprocessing.get_context('spawn').Pool(
            processes, initializer=_start_worker,
            initargs=(source,)) as pool:
        yield from pool.imap(_featurize_in_worker, bounds)


class FeaturizedCorpus(torch.utils.data.Dataset):
    r"""The items of a :class:`~graphormer_sepnorm.pretraining.
    corpus_dataset.SmilesCorpus`, all featurized when this is built and
    then read from memory.

    Item :obj:`i` equals :obj:`source[i]`: the same attributes, dtypes,
    shapes and values (with :obj:`y` if the source has a scaler). A line
    that cannot be featurized is replaced by the next molecule, as the
    source does, with one :class:`RuntimeWarning` naming it while this is
    built (the source warns at every access).

    Args:
        source (SmilesCorpus): The molecules, with the :obj:`scaler` (or
            :obj:`None`) their items are to have.
        processes (int): Worker processes featurizing chunks of
            :data:`CHUNK_SIZE` lines (fewer for a small corpus, so that
            each process gets one); 1 featurizes in this process.
        progress (bool, optional): Show a progress bar and print the
            throughput and memory when done. (default: :obj:`True`)

    Raises:
        FeaturizationError: If no line can be featurized.
    """
    def __init__(self, source: SmilesCorpus, processes: int,
                 progress: bool = True) -> None:
        from tqdm.auto import tqdm
        if processes < 1:
            raise ValueError(f"processes must be at least 1, not {processes}")
        self.source = source
        size = max(1, min(CHUNK_SIZE, math.ceil(len(source) / processes)))
        bounds = [(start, min(start + size, len(source)))
                  for start in range(0, len(source), size)]
        processes = min(processes, len(bounds))
        pieces: dict[str, list[np.ndarray]] = {}
        sizes: dict[str, list[np.ndarray]] = {}
        self._layout: dict[str, tuple[int, np.dtype]] = {}
        failed: list[tuple[int, str]] = []
        start_time = time.perf_counter()
        with tqdm(total=len(source), unit='mol', smoothing=0.1,
                  desc=f'Featurizing {source.path.name}',
                  disable=None if progress else True) as bar:
            for (start, stop), chunk in zip(
                    bounds, _chunks(source, bounds, processes)):
                for key, array in chunk.arrays.items():
                    pieces.setdefault(key, []).append(array)
                    sizes.setdefault(key, []).append(chunk.sizes[key])
                self._layout.update(chunk.layout)
                failed.extend(chunk.failed)
                bar.update(stop - start)
        for position, error in failed:
            warnings.warn(source.replaced_warning(position, error),
                          stacklevel=2)
        good = np.ones(len(source), dtype=bool)
        good[[position for position, _ in failed]] = False
        lines = np.flatnonzero(good)
        if not lines.size:
            raise source.nothing_featurizable()
        # Row (stored graph) of each line: a failed line's is the next
        # featurized line's, past the last one the first's, as the source
        # replaces it.
        rows = np.searchsorted(lines, np.arange(len(source)))
        rows[rows == lines.size] = 0
        self._rows = _narrowed(rows)
        # Popped while concatenated: each attribute's chunks are freed
        # before the next attribute's copy is made.
        self._arrays = {key: np.concatenate(pieces.pop(key),
                                            axis=self._layout[key][0])
                        for key in list(pieces)}
        self._offsets = {key: np.concatenate(
            [[0], np.cumsum(np.concatenate(parts))]).astype(np.int64)
            for key, parts in sizes.items()}
        if progress:
            elapsed = time.perf_counter() - start_time
            print(f"Featurized {len(source):,} molecules of {source.path} in "
                  f"{elapsed:.0f} s ({len(source) / max(elapsed, 1e-9):,.0f}"
                  f" molecules/s, {processes} process"
                  f"{'es' if processes > 1 else ''}): "
                  f"{self.nbytes / 2 ** 20:,.1f} MiB in memory, "
                  f"{self.nbytes / len(source):,.0f} bytes a molecule")

    def __len__(self) -> int:
        return len(self.source)

    def sha256(self) -> str:
        r"""The SHA-256 of the source's SMILES file."""
        return self.source.sha256()

    def smiles(self, index: int) -> str:
        r"""The SMILES of line :obj:`index`."""
        return self.source.smiles(index)

    @property
    def nbytes(self) -> int:
        r"""The bytes of the featurized graphs: the attributes' arrays, their
        offsets and the row of each line (the source's SMILES text comes on
        top)."""
        return (sum(array.nbytes for array in self._arrays.values())
                + sum(array.nbytes for array in self._offsets.values())
                + self._rows.nbytes)

    def __getitem__(self, index: int) -> Data:
        row = int(self._rows[int(index)])
        attributes = {}
        for key, array in self._arrays.items():
            dim, dtype = self._layout[key]
            start, stop = self._offsets[key][row:row + 2]
            part = array[(slice(None),) * dim + (slice(start, stop),)]
            # astype copies: a batch may be changed in place (masked
            # atoms), which must not write into the corpus.
            attributes[key] = torch.from_numpy(part.astype(dtype))
        return Data(**attributes, num_nodes=attributes['x'].shape[0])
