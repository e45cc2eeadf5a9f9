"""The tracked tree stays small enough to send to a lent GPU machine: one
transfer takes at most 64 MiB, issue 43 plans for 60, and
benchmarks/gpu_bundle.py's wheels (28.8 MiB: rdkit 23.6 without Contrib,
tokenizers 3.1, transformers slimmed to its Graphormer 1.5) and data archive
(1.3 MiB, xz) take 30.1 of them: the files git tracks may take at most 29.8
MiB together, so that what travels stays within 59.9 MiB
(benchmarks/README.md; the limit was 31 MiB on 2026-12-07, until the
search-only rows of the per-seed-split sets left their test predictions to
git history). Run weights and per-run curve plots stay out of git
(benchmarks/README.md says which commit holds the weights of the committed
runs)."""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The most the tracked files may take together, in bytes.
LIMIT = int(29.8 * 2 ** 20)


def tracked_sizes(repo: Path) -> dict[str, int]:
    """Bytes of every file git tracks in :obj:`repo` as it is on disk (a
    symbolic link counts as its target's name, as git stores it); skips
    the test outside a git checkout."""
    try:
        listed = subprocess.run(['git', 'ls-files', '-z'], cwd=repo,
                                capture_output=True)
    except FileNotFoundError:
        pytest.skip('git is not installed, so the tracked files are unknown')
    if listed.returncode != 0:
        pytest.skip(f'{repo} is not a git checkout, so the tracked files are '
                    f'unknown')
    names = filter(None, listed.stdout.decode().split('\0'))
    return {name: os.lstat(repo / name).st_size for name in names
            if os.path.lexists(repo / name)}


def test_sizes_are_counted_by_hand(tmp_path):
    subprocess.run(['git', 'init', '-q', str(tmp_path)], check=True)
    (tmp_path / 'a.bin').write_bytes(b'x' * 1000)
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'link').symlink_to('../a.bin')
    (tmp_path / 'untracked.bin').write_bytes(b'y' * 5000)
    subprocess.run(['git', 'add', 'a.bin', 'sub/link'], cwd=tmp_path,
                   check=True)
    assert tracked_sizes(tmp_path) == {'a.bin': 1000,
                                       'sub/link': len('../a.bin')}


def test_tracked_tree_is_within_its_limit():
    sizes = tracked_sizes(REPO)
    total = sum(sizes.values())
    largest = sorted(sizes, key=sizes.get, reverse=True)[:5]
    assert total <= LIMIT, (
        f'the tracked files take {total:,} bytes, over the {LIMIT:,} '
        f'({LIMIT / 2**20:g} MiB) '
        f'a GPU machine receives; largest: '
        + ', '.join(f'{name} ({sizes[name]:,})' for name in largest)
        + '; keep run weights and other large derivable files out of git')
