r"""Chunks of molecules predicted in order, in this process or in worker
processes, with a bounded number of chunks in flight.

On a CPU with several cores, chunks are predicted end to end by worker
processes with one thread each: featurization is Python-bound and a 12-layer
model with 80 channels uses a second thread poorly, so data parallelism uses
the cores best. The workers are forked from the process holding the model
(every member of an ensemble), which they share copy-on-write.
"""
from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional

import torch

from .prediction import Prediction, PredictionError
from .readers import SMILES

if TYPE_CHECKING:  # pragma: no cover
    from .predictor import Predictor

__all__ = ['Chunk', 'stream_chunks', 'available_cores']

# Chunks submitted beyond the ones being predicted, per worker: enough to
# keep every worker busy while the oldest chunk is written.
_QUEUED_PER_WORKER = 2


@dataclass
class Chunk:
    r"""Consecutive input molecules predicted together.

    Args:
        molecules (list[str]): SMILES strings, or SDF records.
        kind (str, optional): :obj:`"smiles"` or :obj:`"sdf"`.
            (default: :obj:`"smiles"`)
        context (Any, optional): Whatever the caller keeps with the chunk
            (the input rows); never sent to a worker.
    """
    molecules: list[str]
    kind: str = SMILES
    context: Any = None


def stream_chunks(predictor: 'Predictor', chunks: Iterable[Chunk],
                  batch_size: int, num_workers: Optional[int] = None
                  ) -> Iterator[tuple[Chunk, list[Prediction]]]:
    r"""Predicts :obj:`chunks` and yields each with its predictions, in
    input order.

    Args:
        predictor (Predictor): The model.
        chunks (Iterable[Chunk]): The input, read lazily: at most
            :obj:`3 * num_workers` chunks are held at a time.
        batch_size (int): Molecules per forward pass.
        num_workers (int, optional): Worker processes; :obj:`0` predicts in
            this process; :obj:`None` starts one per available core on CPU
            (where processes can be forked) once there is more than one
            chunk. (default: :obj:`None`)
    """
    chunks = iter(chunks)
    lookahead = list(_take(chunks, 2))
    workers = _num_workers(predictor, num_workers, len(lookahead) > 1)
    chunks = chain(lookahead, chunks)
    if workers == 0:
        for chunk in chunks:
            yield chunk, predictor.predict_chunk(chunk.molecules, batch_size,
                                                 chunk.kind)
        return
    yield from _stream_in_workers(predictor, chunks, batch_size, workers)


def _stream_in_workers(predictor: 'Predictor', chunks: Iterator[Chunk],
                       batch_size: int, workers: int
                       ) -> Iterator[tuple[Chunk, list[Prediction]]]:
    # Load the Numba-compiled code (shortest paths, the model's path walk)
    # once here rather than in every worker: about 0.7 s each.
    predictor.predict_chunk(['CC'], batch_size)
    global _WORKER_PREDICTOR
    _WORKER_PREDICTOR = predictor  # Inherited by the forked workers.
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context('fork'),
        initializer=_init_worker, initargs=(os.getpid(), ))
    pending: collections.deque = collections.deque()
    try:
        for chunk in chunks:
            pending.append((chunk, pool.submit(
                _worker_predict_chunk, chunk.molecules, batch_size,
                chunk.kind)))
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
        _WORKER_PREDICTOR = None
        # On an early exit (an error, the consumer stopping) only the chunks
        # being predicted are finished.
        pool.shutdown(wait=True, cancel_futures=True)


def _take(iterator: Iterator, count: int) -> Iterator:
    for _ in range(count):
        item = next(iterator, None)
        if item is None:
            return
        yield item


def _num_workers(predictor: 'Predictor', num_workers: Optional[int],
                 several_chunks: bool) -> int:
    if num_workers is not None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise PredictionError(f"num_workers must be a non-negative "
                                  f"integer, got {num_workers!r}")
        if num_workers > 0 and predictor.device.type != 'cpu':
            raise PredictionError(
                "Worker processes run the model on CPU; use "
                "num_workers=0 with a GPU")
        if num_workers > 0 and not _can_fork():
            raise PredictionError(
                "Worker processes need the 'fork' start method (Linux); use "
                "num_workers=0 here")
        return num_workers
    if not several_chunks or predictor.device.type != 'cpu' \
            or not _can_fork():
        return 0
    cores = available_cores()
    return cores if cores > 1 else 0


def _can_fork() -> bool:
    return 'fork' in multiprocessing.get_all_start_methods()


def available_cores() -> int:
    r"""The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# In the worker processes #####################################################

_WORKER_PREDICTOR: Optional['Predictor'] = None
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


def _worker_predict_chunk(molecules: list[str], batch_size: int,
                          kind: str) -> list[Prediction]:
    assert _WORKER_PREDICTOR is not None, 'worker started without a model'
    return _WORKER_PREDICTOR.predict_chunk(molecules, batch_size, kind)
