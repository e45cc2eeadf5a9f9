r"""Chunks of molecules handled in order, in this process or in worker
processes, with a bounded number of chunks in flight.

On a CPU with several cores, chunks are handled end to end by worker
processes with one thread each: featurization is Python-bound and a 12-layer
model with 80 channels uses a second thread poorly, so data parallelism uses
the cores best. With the model on an accelerator, the workers featurize
and this process runs the model. The workers are forked from the process holding the model
(every member of an ensemble), which they share copy-on-write.

This module knows nothing of models or files: it maps a function (the
predictor's, for one chunk) over chunks, so that the predictor can use it
while the file pipeline builds on the predictor.
"""
from __future__ import annotations

import collections
import contextlib
import concurrent.futures
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

import torch

from .molecules import SMILES, Molecule
from .prediction import PredictionError

__all__ = ['Chunk', 'ChunkFunction', 'stream_chunks', 'worker_count',
           'available_cores', 'single_thread']

Result = TypeVar('Result')
#: What is done to each chunk: :obj:`(molecules, kind) -> result`, the
#: result picklable (it comes back from a worker process).
ChunkFunction = Callable[[list[Molecule], str], Result]

# Chunks submitted beyond the ones being predicted, per worker: enough to
# keep every worker busy while the oldest chunk is written.
_QUEUED_PER_WORKER = 2


@dataclass
class Chunk:
    r"""Consecutive input molecules predicted together.

    Args:
        molecules (list): SMILES strings, or SDF records, each with
            its feature-column values for a model that reads some
            (:data:`~graphormer_sepnorm.predict.molecules.Molecule`).
        kind (str, optional): :obj:`"smiles"` or :obj:`"sdf"`.
            (default: :obj:`"smiles"`)
        context (Any, optional): Whatever the caller keeps with the chunk
            (the input rows); never sent to a worker.
    """
    molecules: list[Molecule]
    kind: str = SMILES
    context: Any = None


def stream_chunks(function: ChunkFunction, chunks: Iterable[Chunk],
                  num_workers: Optional[int] = None, on_cpu: bool = True,
                  finish: Optional[Callable[[Any], Result]] = None
                  ) -> Iterator[tuple[Chunk, Result]]:
    r"""Applies :obj:`function` (then :obj:`finish`) to the molecules of
    each chunk and yields each chunk with its result, in input order.

    Args:
        function (callable): :obj:`(molecules, kind) -> result`, e.g. a
            predictor's :meth:`featurize_chunk`. Worker processes inherit
            it (fork), so it need not be picklable; its results must be.
        chunks (Iterable[Chunk]): The input, read lazily: at most
            :obj:`3 * num_workers` chunks are held at a time.
        num_workers (int, optional): Worker processes; :obj:`0` works in
            this process; :obj:`None`: see :func:`worker_count`.
            (default: :obj:`None`)
        on_cpu (bool, optional): Whether the model runs on CPU: then
            :obj:`finish` runs in the workers too (end to end, one chunk
            per core); on an accelerator the workers only run
            :obj:`function` (featurizing on the CPU) and :obj:`finish` (the
            model) runs in this process. (default: :obj:`True`)
        finish (callable, optional): :obj:`result -> result`, applied to
            each result of :obj:`function`. (default: :obj:`None`, none)
    """
    chunks = iter(chunks)
    lookahead = list(_take(chunks, 2))
    if not lookahead:  # No input: no workers to start, none to warm up.
        return
    workers = worker_count(num_workers, on_cpu, len(lookahead) > 1)
    chunks = chain(lookahead, chunks)
    if finish is None:
        work, here = function, _unchanged
    elif on_cpu or workers == 0:
        work, here = _Then(function, finish), _unchanged
    else:
        work, here = function, finish
    if workers == 0:
        for chunk in chunks:
            yield chunk, work(chunk.molecules, chunk.kind)
        return
    for chunk, result in _stream_in_workers(work, chunks, workers,
                                            lookahead[0]):
        yield chunk, here(result)


def _unchanged(result: Any) -> Any:
    return result


@dataclass
class _Then:
    r""":obj:`finish(function(molecules, kind))`."""
    function: ChunkFunction
    finish: Callable[[Any], Any]

    def __call__(self, molecules: list[Molecule], kind: str) -> Any:
        return self.finish(self.function(molecules, kind))


def _stream_in_workers(function: ChunkFunction, chunks: Iterator[Chunk],
                       workers: int, first: Chunk
                       ) -> Iterator[tuple[Chunk, Result]]:
    # Load the Numba-compiled code (shortest paths, the model's path walk)
    # once here rather than in every worker: about 0.7 s each. The input's
    # first molecule is one the function takes (a fixed SMILES would be an
    # error row for a model that reads feature columns, loading nothing).
    function(first.molecules[:1], first.kind)
    global _WORKER_FUNCTION
    _WORKER_FUNCTION = function  # Inherited by the forked workers.
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context('fork'),
        initializer=_init_worker, initargs=(os.getpid(), ))
    pending: collections.deque = collections.deque()
    try:
        for chunk in chunks:
            pending.append((chunk, pool.submit(
                _worker_run, chunk.molecules, chunk.kind)))
            if len(pending) > _QUEUED_PER_WORKER * workers:
                oldest, future = pending.popleft()
                yield oldest, future.result()
        while pending:
            oldest, future = pending.popleft()
            yield oldest, future.result()
    except concurrent.futures.process.BrokenProcessPool as error:
        raise PredictionError(
            f"A prediction worker process died ({error}); retry with "
            f"num_workers=0 (--num-workers 0) to predict in one process and "
            f"see the error") from None
    finally:
        _WORKER_FUNCTION = None
        # On an early exit (an error, the consumer stopping) only the chunks
        # being predicted are finished.
        pool.shutdown(wait=True, cancel_futures=True)


def _take(iterator: Iterator, count: int) -> Iterator:
    for _ in range(count):
        item = next(iterator, None)
        if item is None:
            return
        yield item


def worker_count(num_workers: Optional[int], on_cpu: bool,
                 several_chunks: bool, cores: Optional[int] = None) -> int:
    r"""The worker processes :func:`stream_chunks` starts.

    :obj:`num_workers` if given (workers featurize on the CPU whatever the
    model's device). Otherwise none for a single chunk or where processes
    cannot be forked; else one per core when the model runs on CPU (each
    worker runs it too), and one per core but one on an accelerator (the
    workers featurize, this process feeds the device).

    Args:
        num_workers (int, optional): The requested number, or :obj:`None`.
        on_cpu (bool): Whether the model runs on CPU.
        several_chunks (bool): Whether the input holds more than one chunk.
        cores (int, optional): Cores available. (default:
            :func:`available_cores`)
    """
    if num_workers is not None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise PredictionError(f"num_workers must be a non-negative "
                                  f"integer, got {num_workers!r}")
        if num_workers > 0 and not _can_fork():
            raise PredictionError(
                "Worker processes need the 'fork' start method (Linux); use "
                "num_workers=0 here")
        return num_workers
    if not several_chunks or not _can_fork():
        return 0
    cores = available_cores() if cores is None else cores
    workers = cores if on_cpu else cores - 1
    return workers if cores > 1 else 0


def _can_fork() -> bool:
    return 'fork' in multiprocessing.get_all_start_methods()


def available_cores() -> int:
    r"""The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    r"""Runs the block with one intra-op thread. A second thread speeds this
    small model (80 channels, a few dozen tokens per graph) up by about a
    tenth on idle cores, and slows it down ten times or more when the cores
    are shared with other processes (measured: 1,328 molecules/s on one
    thread, 57 on two, on this project's busy 2-core machine); several cores
    are used by worker processes instead."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


# In the worker processes #####################################################

_WORKER_FUNCTION: Optional[ChunkFunction] = None
# prctl option (linux/prctl.h): the signal a process gets when its parent
# dies.
_PR_SET_PDEATHSIG = 1


def _init_worker(parent: int) -> None:
    # One thread per worker: the workers themselves use the cores.
    torch.set_num_threads(1)
    # Ctrl-C is handled by the parent, which stops the pool; a worker
    # interrupted mid-chunk would only break it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with(parent)


def _exit_with(parent: int) -> None:
    r"""Ends this worker when :obj:`parent` dies, even by SIGKILL (then the
    pool cannot tell it to stop, and the task pipe it waits on stays open,
    since every worker inherited its write end)."""
    library = ctypes.util.find_library('c')
    if library is not None:
        try:
            prctl = ctypes.CDLL(library, use_errno=True).prctl
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # pragma: no cover - not Linux
            pass
    if os.getppid() != parent:  # The parent died before prctl took effect.
        os._exit(1)


def _worker_run(molecules: list[Molecule], kind: str) -> Any:
    assert _WORKER_FUNCTION is not None, 'worker started without a function'
    return _WORKER_FUNCTION(molecules, kind)
