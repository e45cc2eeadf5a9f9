r"""The pretraining corpus: the MOSES molecules (ZINC Clean Leads, from the
molsets wheel) as canonical SMILES, deduplicated, without any validation or
test molecule of the project's benchmarks (:mod:`.exclusions`), split into a
shuffled train file and a held-out random validation sample.

Written under ``<data_root>/pretraining/moses/`` (never into git):
``train.smi`` and ``val.smi`` (one canonical SMILES per line, no header) and
``manifest.json`` (the source, the counts of every step, the settings).
The folder is built beside its place and renamed into it when complete, so
an interrupted build never leaves a corpus that looks finished; a complete
corpus is not built again.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from ..data.errors import DataError
from ..training.preflight import check_writable_folder
from .exclusions import (EXCLUSION_SOURCES, MATCH_RULES, ExcludedSplit,
                         default_exclusion_paths, load_exclusions)
from .molecule_keys import iter_molecule_keys
from .moses_wheel import (MOSES_MEMBERS, fetch_moses_wheel, read_moses_member,
                          sha256_of)

__all__ = ['CORPUS_FILES', 'corpus_dir', 'read_manifest', 'build_corpus']

PathLike = Union[str, Path]

#: The files of a complete corpus; the manifest is written last.
CORPUS_FILES = ('train.smi', 'val.smi', 'manifest.json')
MANIFEST_VERSION = 1


def corpus_dir(data_root: PathLike) -> Path:
    r"""The corpus folder under :obj:`data_root`."""
    return Path(data_root) / 'pretraining' / 'moses'


def read_manifest(directory: PathLike) -> Optional[dict]:
    r"""The manifest of the complete corpus in :obj:`directory`, or
    :obj:`None` if it holds none (missing folder, file or manifest entry)."""
    directory = Path(directory)
    if not all((directory / name).is_file() for name in CORPUS_FILES):
        return None
    try:
        manifest = json.loads((directory / 'manifest.json').read_text())
    except (OSError, ValueError):
        return None
    return manifest if manifest.get('complete') else None


def _settings(val_size: int, seed: int, skipped: Sequence[str]) -> dict:
    return {'val_size': val_size, 'seed': seed,
            'skipped_exclusions': sorted(skipped)}


def _resolve_exclusion_paths(data_root: PathLike,
                             exclusion_root: Optional[PathLike],
                             exclusion_paths: Optional[Mapping[str, PathLike]],
                             skip: Sequence[str]) -> dict[str, Path]:
    unknown = sorted((set(skip) | set(exclusion_paths or {}))
                     - set(EXCLUSION_SOURCES))
    if unknown:
        raise ValueError(f"unknown exclusion source(s) {', '.join(unknown)}; "
                         f"choose from {', '.join(EXCLUSION_SOURCES)}")
    paths = default_exclusion_paths(exclusion_root or data_root)
    paths.update({k: Path(v) for k, v in (exclusion_paths or {}).items()})
    return {k: v for k, v in paths.items() if k not in skip}


def _write_lines(path: Path, lines: Sequence[str]) -> dict:
    with open(path, 'w', encoding='utf-8', newline='\n') as f:
        for line in lines:
            f.write(line + '\n')
    return {'lines': len(lines), 'sha256': sha256_of(path)}


class _Tally:
    r"""The counts of the deduplication and exclusion pass."""

    def __init__(self, excluded: Sequence[ExcludedSplit]) -> None:
        self.files = {name: dict.fromkeys(
            ('read', 'unparsable', 'duplicates', 'removed', 'kept'), 0)
            for name in MOSES_MEMBERS}
        self.splits = [{'source': e.source, 'split': e.split,
                        'path': e.path, 'molecules': e.molecules,
                        'unparsable': e.unparsable,
                        'matched': dict.fromkeys(MATCH_RULES, 0)}
                       for e in excluded]
        self.by_rule = dict.fromkeys(MATCH_RULES, 0)


def _dedup_and_exclude(members, excluded: Sequence[ExcludedSplit],
                       processes: int, progress: bool
                       ) -> tuple[list[str], _Tally]:
    r"""The unique canonical SMILES of :obj:`members` that match no
    excluded molecule, in first-occurrence order, and the counts."""
    tally = _Tally(excluded)
    smiles = [s for member in members for s in member.smiles]
    file_of = np.repeat(np.arange(len(members)),
                        [len(m.smiles) for m in members])
    seen, kept = set(), []
    keys_iter = iter_molecule_keys(smiles, processes=processes,
                                   progress=progress,
                                   desc='Canonical SMILES + InChIKey')
    for i, keys in enumerate(keys_iter):
        counts = tally.files[members[file_of[i]].name]
        counts['read'] += 1
        if keys is None:
            counts['unparsable'] += 1
            continue
        if keys.smiles in seen:
            counts['duplicates'] += 1
            continue
        seen.add(keys.smiles)
        first_rule = None
        for split, entry in zip(excluded, tally.splits):
            rule = split.match(keys)
            if rule is not None:
                entry['matched'][rule] += 1
                if first_rule is None or (MATCH_RULES.index(rule)
                                          < MATCH_RULES.index(first_rule)):
                    first_rule = rule
        if first_rule is not None:
            tally.by_rule[first_rule] += 1
            counts['removed'] += 1
            continue
        counts['kept'] += 1
        kept.append(keys.smiles)
    return kept, tally


def _manifest(wheel: Path, members, tally: _Tally, kept: int,
              files: dict, settings: dict, skipped: Sequence[str],
              processes: int, elapsed: float) -> dict:
    from rdkit import __version__ as rdkit_version

    def total(key):
        return sum(c[key] for c in tally.files.values())
    for entry in tally.splits:
        entry['matched_total'] = sum(entry['matched'].values())
    return {
        'complete': True,
        'format_version': MANIFEST_VERSION,
        'corpus': 'moses',
        'source': {
            'wheel': wheel.name, 'sha256': sha256_of(wheel),
            'license': 'MIT (MOSES, molsets)',
            'files': {m.name: {'member': m.member, 'columns': m.columns,
                               **tally.files[m.name]} for m in members}},
        'settings': settings,
        'counts': {'read': total('read'), 'unparsable': total('unparsable'),
                   'duplicates': total('duplicates'),
                   'unique': total('removed') + kept,
                   'removed': total('removed'),
                   'train': files['train.smi']['lines'],
                   'val': files['val.smi']['lines']},
        'exclusions': {'rules': list(MATCH_RULES),
                       'removed_by_rule': tally.by_rule,
                       'splits': tally.splits,
                       'skipped': sorted(skipped)},
        'files': files,
        'rdkit_version': rdkit_version,
        'python': platform.python_version(),
        'processes': processes,
        'elapsed_seconds': round(elapsed, 1),
        'created': datetime.now(timezone.utc).isoformat(timespec='seconds'),
    }


def _check_same_wheel(manifest: dict, wheel: Optional[PathLike],
                      target: Path) -> str:
    r"""Compares the sha256 of :obj:`wheel` (when given and present) with
    the one the corpus was built from; returns the phrase saying so."""
    if wheel is None or not Path(wheel).is_file():
        return ''
    built_from = manifest.get('source', {})
    digest = sha256_of(wheel)
    if digest != built_from.get('sha256'):
        raise DataError(
            f"{target} was built from {built_from.get('wheel')} (sha256 "
            f"{str(built_from.get('sha256'))[:16]}...), not from {wheel} "
            f"(sha256 {digest[:16]}...); remove {target} to build the "
            f"corpus from this wheel, or leave out --wheel to use it as it "
            f"is")
    return f" built from this wheel (sha256 {digest[:16]}... matches)"


def build_corpus(data_root: PathLike, wheel: Optional[PathLike] = None,
                 exclusion_root: Optional[PathLike] = None,
                 exclusion_paths: Optional[Mapping[str, PathLike]] = None,
                 skip: Sequence[str] = (), val_size: int = 10_000,
                 seed: int = 0, processes: int = 2,
                 progress: bool = True) -> dict:
    r"""Builds the corpus under :func:`corpus_dir` and returns its manifest;
    returns the existing manifest if a complete corpus with the same
    settings is already there.

    Args:
        data_root (str or Path): The data root.
        wheel (str or Path, optional): The molsets 0.3.1 wheel; by default
            it is downloaded with pip into ``<data_root>/pretraining/
            downloads`` (or found there).
        exclusion_root (str or Path, optional): The folder holding the
            exclusion sources in the layout of ``../shared/data``
            (:func:`~.exclusions.default_exclusion_paths`); by default the
            data root.
        exclusion_paths (dict, optional): Source name to folder or file,
            overriding the exclusion root for that source.
        skip (sequence of str, optional): Sources not to exclude (recorded
            in the manifest).
        val_size (int, optional): Molecules held out as ``val.smi``.
            (default: :obj:`10000`)
        seed (int, optional): Seed of the shuffle that draws the validation
            sample and orders ``train.smi``. (default: :obj:`0`)
        processes (int, optional): Worker processes for RDKit.
            (default: :obj:`2`)
        progress (bool, optional): Progress bars and throughput.

    Raises:
        DataError: A missing exclusion source (unless skipped), a wheel that
            cannot be read or downloaded, a corpus folder that is
            incomplete or was built with other settings or from another
            wheel (compared by sha256), no molecule kept (the counts say
            why), a validation size that leaves no training molecule.
        ConfigError: The data root is not a writable folder.
    """
    start = time.perf_counter()
    target = corpus_dir(data_root)
    settings = _settings(val_size, seed, skip)
    existing = read_manifest(target)
    if existing is not None:
        if existing.get('settings') != settings:
            raise DataError(
                f"{target} holds a corpus built with {existing.get('settings')}"
                f", not {settings}; remove {target} to build it again")
        same = _check_same_wheel(existing, wheel, target)
        if progress:
            print(f"{target} holds a complete corpus{same}; nothing to do")
        return existing
    if target.exists():
        raise DataError(f"{target} exists but holds no complete corpus (no "
                        f"complete manifest.json); remove it to build the "
                        f"corpus again")
    if val_size < 1:
        raise DataError(f"val_size must be at least 1, not {val_size}")
    check_writable_folder('--data-root', data_root)
    excluded = load_exclusions(_resolve_exclusion_paths(
        data_root, exclusion_root, exclusion_paths, skip))
    wheel = Path(wheel) if wheel is not None else fetch_moses_wheel(
        Path(data_root) / 'pretraining' / 'downloads')
    members = [read_moses_member(wheel, name) for name in MOSES_MEMBERS]
    kept, tally = _dedup_and_exclude(members, excluded, processes, progress)
    if not kept:
        def total(key):
            return sum(c[key] for c in tally.files.values())
        raise DataError(
            f"{wheel} gives no molecule to keep: of {total('read')} SMILES "
            f"read, {total('unparsable')} do not parse, "
            f"{total('duplicates')} are duplicates and {total('removed')} "
            f"are excluded (benchmark validation and test molecules); pass "
            f"the molsets 0.3.1 wheel with --wheel")
    if val_size >= len(kept):
        raise DataError(f"val_size {val_size} leaves no training molecule "
                        f"of the {len(kept)} kept; choose a smaller val_size")
    order = np.random.default_rng(seed).permutation(len(kept))
    # Built beside its place (same file system, so the rename is atomic);
    # a leftover .moses.partial-* folder is from an interrupted build.
    partial = target.with_name(f'.moses.partial-{os.getpid()}')
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        files = {'train.smi': _write_lines(
                     partial / 'train.smi', [kept[i] for i in order[val_size:]]),
                 'val.smi': _write_lines(
                     partial / 'val.smi', [kept[i] for i in order[:val_size]])}
        manifest = _manifest(wheel, members, tally, len(kept), files,
                             settings, skip, processes,
                             time.perf_counter() - start)
        (partial / 'manifest.json').write_text(
            json.dumps(manifest, indent=2) + '\n')
        os.rename(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest
