#!/usr/bin/env python
r"""Packs what ``benchmarks/gpu_check.py`` needs on a GPU machine without
internet, beside the repository (both folders are ignored by git):

* ``.whl/``: the wheels its Python (3.12) lacks: rdkit (slimmed, see
  :func:`slim_wheel`), ogb and ogb's small dependencies (:data:`WHEELS`),
  which ``benchmarks/device_run.sh`` installs for every step;
* ``.whl/reference/``: the Hugging Face reference (:data:`REFERENCE_WHEELS`):
  ``transformers`` before its Graphormer was removed, slimmed to what the
  reference imports (see :func:`slim_wheel`), with the ``huggingface_hub``
  and ``tokenizers`` it requires. ``device_run.sh`` installs them on a path
  of their own, which only the reference step puts first: on every other
  path they would shadow the machine's transformers 5, which torchmetrics
  imports when Lightning loads (and the slimmed wheel lacks what it
  reads);
* ``.device-data/data.tar.xz``: the folders of ``--shared`` that
  gpu_check.py reads (its ``DATA_PATHS``) in one archive.

It prints the sizes against the 64 MiB that one call may carry (tracked
tree included)::

    python benchmarks/gpu_bundle.py [--shared ../shared/data]

``--python-version 3.11 --into DIR`` fetches them for another Python into
another folder: the CI rehearsal of the device run
(``benchmarks/device_rehearsal.sh``).
"""
from __future__ import annotations

import argparse
import base64
import csv
import fnmatch
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Wheels for CPython 3.12 on x86-64 Linux that every step may import.
WHEELS = ['rdkit', 'ogb==1.3.6', 'outdated', 'littleutils']
#: The reference's wheels, in their own folder :data:`REFERENCE_DIR`.
#: transformers 4.57 is the last release with the (deprecated) Graphormer; it refuses the newer
#: huggingface_hub and tokenizers of the GPU machine's image. The reference
#: tokenizes nothing, and transformers checks tokenizers' version only where
#: it is installed, but it imports tokenizers anyway: its configuration_utils
#: (GraphormerConfig's base) imports the GGUF mapping of integrations/ggml.py,
#: which imports tokenizers unconditionally.
REFERENCE_WHEELS = ['transformers>=4.41,<4.58', 'huggingface_hub<1.0',
                    'tokenizers>=0.22,<=0.23.0']
#: Where the reference's wheels go, under ``.whl/``; ``.whl/*.whl`` (what
#: every step gets) does not reach into it.
REFERENCE_DIR = 'reference'

#: What :func:`slim_wheel` keeps of ``transformers/models/``, which holds 43
#: of the 52 MB the wheel unpacks to: the Graphormer reference, and
#: ``auto/``, whose configuration mapping ``modeling_utils`` imports. The
#: ``__init__.py`` of ``models/`` and ``models/deprecated/`` find their
#: submodules by listing their folder, so the other models can go.
SLIM_KEEP_MODELS = ('auto', 'deprecated/graphormer')
#: The members (``fnmatch`` patterns) that :func:`slim_wheel` drops from
#: each project's wheel, none of which anything on the GPU machine imports.
#: transformers: task pipelines, the command line (with its console
#: scripts) and ONNX export. rdkit: ``Contrib/``, whose synthetic
#: accessibility and natural-product score models are 6.2 of the wheel's
#: 30.3 MiB (only benchmarks/chem's penalized logP reads them, never on the
#: device), and the type stubs.
SLIM_DROP = {
    'transformers': ('transformers/pipelines/*', 'transformers/commands/*',
                     'transformers/onnx/*', '*.dist-info/entry_points.txt'),
    'rdkit': ('rdkit/Contrib/*', 'rdkit-stubs/*'),
}
#: The build tag that names a slimmed wheel (a wheel's build tag starts
#: with a digit); pip installs it as the release it slims.
SLIM_BUILD = '1slim'
PLATFORMS = ['manylinux_2_28_x86_64', 'manylinux_2_17_x86_64',
             'manylinux2014_x86_64']
LIMIT_MIB = 64


def download_wheels(target: Path, wheels: list[str],
                    python_version: str = '3.12') -> None:
    r"""Downloads :obj:`wheels` (no dependencies) for CPython
    :obj:`python_version` on x86-64 Linux into :obj:`target`."""
    target.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, '-m', 'pip', 'download', '--no-deps',
               '--only-binary=:all:', '--python-version', python_version,
               '--implementation', 'cp', '-d', str(target), *wheels]
    for platform in PLATFORMS:
        command[4:4] = ['--platform', platform]
    subprocess.run(command, check=True)


def _slim_keeps(name: str, project: str) -> bool:
    r"""Whether :func:`slim_wheel` keeps the member :obj:`name` of a wheel
    of :obj:`project`."""
    if any(fnmatch.fnmatch(name, pattern)
           for pattern in SLIM_DROP.get(project, ())):
        return False
    parts = name.split('/')
    if project != 'transformers' or parts[:2] != ['transformers', 'models']:
        return True
    folder = '/'.join(parts[2:-1])
    # Inside a kept model, or directly in a folder above one (the
    # __init__.py of models/ and models/deprecated/).
    return any(folder == keep or folder.startswith(keep + '/') or
               keep.startswith(folder + '/') or not folder
               for keep in SLIM_KEEP_MODELS)


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return 'sha256=' + base64.urlsafe_b64encode(digest).rstrip(b'=').decode()


def slim_wheel(wheel: Path, target: Path) -> Path:
    r"""Writes into :obj:`target` a copy of :obj:`wheel` without the
    members its project's :data:`SLIM_DROP` names (and, for transformers,
    the models other than :data:`SLIM_KEEP_MODELS`); its ``RECORD`` lists
    exactly the files it holds. Returns its path, named with the build tag
    :data:`SLIM_BUILD` (``transformers-4.57.6-1slim-py3-none-any.whl``),
    which the wheel's ``WHEEL`` file states too."""
    fields = wheel.name[:-len('.whl')].split('-')
    if len(fields) != 5:
        raise ValueError(f'{wheel.name}: a wheel with a build tag already '
                         f'(slimmed before?)')
    name, version, *tags = fields
    dist_info = f'{name}-{version}.dist-info'
    out = target / f"{'-'.join([name, version, SLIM_BUILD, *tags])}.whl"
    with zipfile.ZipFile(wheel) as source:
        members = [m for m in source.infolist()
                   if _slim_keeps(m.filename, name.lower())]
        present = {m.filename for m in members}
        record = f'{dist_info}/RECORD'
        wheel_file = f'{dist_info}/WHEEL'
        lines = source.read(wheel_file).decode().splitlines()
        wheel_text = '\n'.join(
            [line for line in lines
             if line.strip() and not line.startswith('Build:')]
            + [f'Build: {SLIM_BUILD}']) + '\n'
        rows = []
        for row in csv.reader(io.StringIO(source.read(record).decode())):
            if row and row[0] == wheel_file:
                data = wheel_text.encode()
                row = [wheel_file, _record_hash(data), str(len(data))]
            if row and row[0] in present:
                rows.append(row)
        text = io.StringIO()
        csv.writer(text, lineterminator='\n').writerows(rows)
        partial = out.with_suffix('.part')
        with zipfile.ZipFile(partial, 'w', zipfile.ZIP_DEFLATED) as slim:
            for member in members:
                if member.filename == record:
                    continue  # Written last, as wheels have it.
                data = (wheel_text.encode() if member.filename == wheel_file
                        else source.read(member))
                slim.writestr(member, data, zipfile.ZIP_DEFLATED)
            slim.writestr(source.getinfo(record), text.getvalue(),
                          zipfile.ZIP_DEFLATED)
    partial.replace(out)
    return out


def slim_downloaded(target: Path) -> None:
    r"""Replaces each wheel in :obj:`target` of a project that
    :data:`SLIM_DROP` names by its slimmed copy (two wheels of one project
    would stop the install there); wheels slimmed before stay as they
    are."""
    for project in SLIM_DROP:
        for wheel in target.glob(f'{project}-*.whl'):
            if len(wheel.name.split('-')) == 5:
                slim_wheel(wheel, target)
                wheel.unlink()


def pack_data(shared: Path, target: Path) -> None:
    from device_data import DATA_ARCHIVE, DATA_PATHS
    missing = [name for name in DATA_PATHS if not (shared / name).exists()]
    if missing:
        raise SystemExit(f"--shared {shared} lacks {', '.join(missing)}")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    with tarfile.open(target / DATA_ARCHIVE, 'w:xz') as tar:
        for name in DATA_PATHS:
            tar.add(shared / name, arcname=name)


def mib(path: Path) -> float:
    files = [path] if path.is_file() else path.rglob('*')
    return sum(f.stat().st_size for f in files if f.is_file()) / 2**20


def tracked_mib() -> float:
    r"""The tracked files, a symbolic link counted as a link (it travels as
    one, as tests/test_tree_size.py counts it)."""
    names = subprocess.run(['git', 'ls-files', '-z'], cwd=REPO, check=True,
                           capture_output=True).stdout.split(b'\0')
    return sum((REPO / n.decode()).lstat().st_size for n in names
               if n and os.path.lexists(REPO / n.decode())) / 2**20


def bundle(into: Path, shared: Path, python_version: str = '3.12') -> dict:
    r"""Fills :obj:`into`'s ``.whl/`` (the reference's wheels in
    ``.whl/reference/``) and ``.device-data/``; returns their sizes and the
    tracked tree's, in MiB."""
    shutil.rmtree(into / '.whl', ignore_errors=True)
    download_wheels(into / '.whl', WHEELS, python_version)
    slim_downloaded(into / '.whl')
    reference = into / '.whl' / REFERENCE_DIR
    download_wheels(reference, REFERENCE_WHEELS, python_version)
    slim_downloaded(reference)
    pack_data(shared, into / '.device-data')
    return {'tracked tree': tracked_mib(), '.whl': mib(into / '.whl'),
            '.device-data': mib(into / '.device-data')}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--shared', type=Path,
                        default=REPO.parent / 'shared' / 'data',
                        help='The data folder (laid out as ../shared/data).')
    parser.add_argument('--python-version', default='3.12',
                        help="The wheels' CPython version (the GPU "
                        "machine's: 3.12).")
    parser.add_argument('--into', type=Path, default=REPO,
                        help='The folder that receives .whl/ and '
                        '.device-data/ (default: the repository).')
    args = parser.parse_args(argv)
    sizes = bundle(args.into, args.shared, args.python_version)
    for name, size in sizes.items():
        print(f'{name:14s} {size:6.1f} MiB')
    total = sum(sizes.values())
    print(f"{'total':14s} {total:6.1f} MiB of the {LIMIT_MIB} MiB a call "
          f"carries")
    return 0 if total <= LIMIT_MIB else 1


if __name__ == '__main__':
    sys.exit(main())
