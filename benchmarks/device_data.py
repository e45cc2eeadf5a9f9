r"""The data the GPU check reads (``benchmarks/gpu_check.py``), which
travels to the GPU machine as one archive that ``benchmarks/gpu_bundle.py``
packs: what it holds and how the check finds it there."""
from __future__ import annotations

import tarfile
from pathlib import Path

#: What the steps read under ``--data`` (laid out as ../shared/data):
#: ZINC-proxy's raw files and SMILES, MolHIV's SMILES (the speed step and
#: the Predictor test featurize them; no step processes the whole
#: dataset), and the real ZINC-subset graphs the GPU tests compare on.
DATA_PATHS = ('ZINC-proxy/raw', 'ZINC-proxy/smiles',
              'ogbg_molhiv/mapping/mol.csv.gz',
              'ZINC/subset_partial_pyg/val_arrays.npz')
#: The one archive of :data:`DATA_PATHS` that gpu_bundle.py packs.
DATA_ARCHIVE = 'data.tar.xz'


def prepare_data(source: Path, work: Path) -> dict[str, Path]:
    r"""The data folders the steps read, from :obj:`source`: a folder laid
    out as ../shared/data, or one holding :data:`DATA_ARCHIVE` (unpacked
    into :obj:`work`)."""
    if not source.is_dir():
        raise SystemExit(f"--data {source} is not a folder; bring the data "
                         f"laid out as ../shared/data (see --help)")
    if (source / DATA_ARCHIVE).is_file():
        with tarfile.open(source / DATA_ARCHIVE) as tar:
            tar.extractall(work / 'shared', filter='data')
        source = work / 'shared'
    missing = [name for name in DATA_PATHS if not (source / name).exists()]
    if missing:
        raise SystemExit(f"Missing {', '.join(missing)} in {source}: --data "
                         f"must hold {', '.join(DATA_PATHS)}, or the "
                         f"{DATA_ARCHIVE} of benchmarks/gpu_bundle.py")
    return dict(shared=source, zinc=source / 'ZINC-proxy',
                smiles=source / 'ZINC-proxy' / 'smiles')
