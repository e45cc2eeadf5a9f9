#!/usr/bin/env python
r"""Packs what ``benchmarks/gpu_check.py`` needs on a GPU machine without
internet, beside the repository (both folders are ignored by git):

* ``.whl/``: the wheels its Python (3.12) lacks: rdkit, ogb and ogb's small
  dependencies, and the Hugging Face reference (``transformers`` before its
  Graphormer was removed, with the ``huggingface_hub`` and ``tokenizers``
  it requires);
* ``.device-data/data.tar.gz``: the folders of ``--shared`` that
  gpu_check.py reads (its ``DATA_PATHS``) in one archive.

It prints the sizes against the 64 MiB that one call may carry (tracked
tree included)::

    python benchmarks/gpu_bundle.py [--shared ../shared/data]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Wheels for CPython 3.12 on x86-64 Linux. transformers 4.57 is the last
#: release with the (deprecated) Graphormer; it refuses the newer
#: huggingface_hub and tokenizers of the GPU machine's image.
WHEELS = ['rdkit', 'ogb==1.3.6', 'outdated', 'littleutils',
          'transformers>=4.41,<4.58', 'huggingface_hub<1.0',
          'tokenizers>=0.22,<=0.23.0']
PLATFORMS = ['manylinux_2_28_x86_64', 'manylinux_2_17_x86_64',
             'manylinux2014_x86_64']
LIMIT_MIB = 64


def download_wheels(target: Path) -> None:
    target.mkdir(exist_ok=True)
    command = [sys.executable, '-m', 'pip', 'download', '--no-deps',
               '--only-binary=:all:', '--python-version', '3.12',
               '--implementation', 'cp', '-d', str(target), *WHEELS]
    for platform in PLATFORMS:
        command[4:4] = ['--platform', platform]
    subprocess.run(command, check=True)


def pack_data(shared: Path, target: Path) -> None:
    from gpu_check import DATA_ARCHIVE, DATA_PATHS
    missing = [name for name in DATA_PATHS if not (shared / name).exists()]
    if missing:
        raise SystemExit(f"--shared {shared} lacks {', '.join(missing)}")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    with tarfile.open(target / DATA_ARCHIVE, 'w:gz') as tar:
        for name in DATA_PATHS:
            tar.add(shared / name, arcname=name)


def mib(path: Path) -> float:
    files = [path] if path.is_file() else path.rglob('*')
    return sum(f.stat().st_size for f in files if f.is_file()) / 2**20


def tracked_mib() -> float:
    names = subprocess.run(['git', 'ls-files', '-z'], cwd=REPO, check=True,
                           capture_output=True).stdout.split(b'\0')
    return sum((REPO / n.decode()).stat().st_size for n in names
               if n and (REPO / n.decode()).is_file()) / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', type=Path,
                        default=REPO.parent / 'shared' / 'data')
    args = parser.parse_args(argv)
    download_wheels(REPO / '.whl')
    pack_data(args.shared, REPO / '.device-data')
    sizes = {'tracked tree': tracked_mib(), '.whl': mib(REPO / '.whl'),
             '.device-data': mib(REPO / '.device-data')}
    for name, size in sizes.items():
        print(f'{name:14s} {size:6.1f} MiB')
    total = sum(sizes.values())
    print(f"{'total':14s} {total:6.1f} MiB of the {LIMIT_MIB} MiB a call "
          f"carries")
    return 0 if total <= LIMIT_MIB else 1


if __name__ == '__main__':
    sys.exit(main())
