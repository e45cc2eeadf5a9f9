"""benchmarks/gpu_bundle.py's slimmed transformers and rdkit wheels: on
synthetic wheels, which files each keeps and that its RECORD lists exactly
them with their hashes; and, when .whl/reference/ holds the real wheel (gpu_bundle.py downloads
it; git ignores it), that the reference Graphormer imports from the slimmed
one alone and gives our converted model's outputs."""
import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import zipfile

import pytest
from benchmark_helpers import script_module
from conftest import REPO

gpu_bundle = script_module('gpu_bundle')

DIST_INFO = 'transformers-1.0.dist-info'
KEPT = {
    'transformers/__init__.py', 'transformers/modeling_utils.py',
    'transformers/utils/__init__.py', 'transformers/models/__init__.py',
    'transformers/models/auto/__init__.py',
    'transformers/models/auto/configuration_auto.py',
    'transformers/models/deprecated/__init__.py',
    'transformers/models/deprecated/graphormer/__init__.py',
    'transformers/models/deprecated/graphormer/algos_graphormer.pyx',
    'transformers/models/deprecated/graphormer/modeling_graphormer.py',
    f'{DIST_INFO}/METADATA', f'{DIST_INFO}/WHEEL',
    f'{DIST_INFO}/top_level.txt', f'{DIST_INFO}/RECORD'}
DROPPED = {
    'transformers/models/bert/__init__.py',
    'transformers/models/bert/modeling_bert.py',
    'transformers/models/deprecated/mega/modeling_mega.py',
    'transformers/models/autoformer/modeling_autoformer.py',
    'transformers/pipelines/__init__.py',
    'transformers/commands/transformers_cli.py',
    'transformers/onnx/__init__.py', f'{DIST_INFO}/entry_points.txt'}


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return 'sha256=' + digest.rstrip(b'=').decode()


def write_wheel(path, names, dist_info=DIST_INFO) -> None:
    """A wheel holding :obj:`names` (each file's content its name) and a
    RECORD of them all, as pip's wheels have it."""
    rows = []
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as wheel:
        for name in sorted(names - {f'{DIST_INFO}/RECORD'}):
            data = (b'Wheel-Version: 1.0\nRoot-Is-Purelib: true\n'
                    b'Tag: py3-none-any\n\n' if name.endswith('/WHEEL')
                    else name.encode())
            wheel.writestr(name, data)
            rows.append([name, record_hash(data), str(len(data))])
        rows.append([f'{dist_info}/RECORD', '', ''])
        text = io.StringIO()
        csv.writer(text, lineterminator='\n').writerows(rows)
        wheel.writestr(f'{dist_info}/RECORD', text.getvalue())


def read_wheel(path, dist_info=DIST_INFO):
    """The wheel's files with their contents, and its RECORD's rows."""
    with zipfile.ZipFile(path) as wheel:
        files = {name: wheel.read(name) for name in wheel.namelist()}
    rows = list(csv.reader(io.StringIO(
        files[f'{dist_info}/RECORD'].decode())))
    return files, rows


def test_slimmed_wheel_keeps_the_reference_and_a_true_record(tmp_path):
    full = tmp_path / 'transformers-1.0-py3-none-any.whl'
    write_wheel(full, KEPT | DROPPED)
    out = tmp_path / 'out'
    out.mkdir()
    slim = gpu_bundle.slim_wheel(full, out)
    # A valid wheel name (the build tag starts with a digit): pip installs
    # it as transformers 1.0.
    assert slim.name == 'transformers-1.0-1slim-py3-none-any.whl'
    files, rows = read_wheel(slim)
    assert set(files) == KEPT
    assert [row[0] for row in rows] == sorted(KEPT - {
        f'{DIST_INFO}/RECORD'}) + [f'{DIST_INFO}/RECORD']
    for name, digest, size in rows[:-1]:
        assert (digest, int(size)) == (record_hash(files[name]),
                                       len(files[name])), name
    assert rows[-1] == [f'{DIST_INFO}/RECORD', '', '']
    assert files[f'{DIST_INFO}/WHEEL'].decode().splitlines() == [
        'Wheel-Version: 1.0', 'Root-Is-Purelib: true', 'Tag: py3-none-any',
        'Build: 1slim']
    assert files['transformers/models/deprecated/graphormer/'
                 'modeling_graphormer.py'] == (
        b'transformers/models/deprecated/graphormer/modeling_graphormer.py')


RDKIT_INFO = 'rdkit-2026.9.1.dist-info'
RDKIT_KEPT = {
    'rdkit/__init__.py', 'rdkit/Chem/__init__.py', 'rdkit/Chem/rdchem.so',
    'rdkit/Chem/Draw/__init__.py', 'rdkit/Data/atom_isotopes.dat',
    'rdkit/RDConfig.py', 'rdkit.libs/libRDKitGraphMol.so.1',
    f'{RDKIT_INFO}/METADATA', f'{RDKIT_INFO}/WHEEL', f'{RDKIT_INFO}/RECORD'}
RDKIT_DROPPED = {
    'rdkit/Contrib/SA_Score/sascorer.py',
    'rdkit/Contrib/SA_Score/fpscores.pkl.gz',
    'rdkit/Contrib/NP_Score/publicnp.model.gz',
    'rdkit-stubs/Chem/__init__.pyi', 'rdkit-stubs/__init__.pyi'}


def test_slimmed_rdkit_keeps_all_but_contrib_and_the_stubs(tmp_path):
    full = tmp_path / 'rdkit-2026.9.1-cp312-cp312-manylinux_2_28_x86_64.whl'
    write_wheel(full, RDKIT_KEPT | RDKIT_DROPPED, RDKIT_INFO)
    out = tmp_path / 'out'
    out.mkdir()
    slim = gpu_bundle.slim_wheel(full, out)
    assert slim.name == ('rdkit-2026.9.1-1slim-cp312-cp312-'
                         'manylinux_2_28_x86_64.whl')
    files, rows = read_wheel(slim, RDKIT_INFO)
    assert set(files) == RDKIT_KEPT
    assert {row[0] for row in rows} == RDKIT_KEPT


def test_the_downloaded_wheels_are_replaced_by_the_slimmed_ones(tmp_path):
    write_wheel(tmp_path / 'transformers-1.0-py3-none-any.whl',
                KEPT | DROPPED)
    write_wheel(tmp_path / 'rdkit-2026.9.1-cp312-cp312-linux_x86_64.whl',
                RDKIT_KEPT | RDKIT_DROPPED, RDKIT_INFO)
    (tmp_path / 'ogb-1.3.6-py3-none-any.whl').write_bytes(b'untouched')
    gpu_bundle.slim_downloaded(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'ogb-1.3.6-py3-none-any.whl',
        'rdkit-2026.9.1-1slim-cp312-cp312-linux_x86_64.whl',
        'transformers-1.0-1slim-py3-none-any.whl']
    gpu_bundle.slim_downloaded(tmp_path)  # Slims nothing twice.
    assert len(list(tmp_path.glob('transformers-*'))) == 1
    assert len(list(tmp_path.glob('rdkit-*'))) == 1


#: Run from the slimmed install: the reference's classes import, and a
#: small random reference gives what convert_graphormer makes of it.
CHECK = '''
import sys
import torch
import transformers
assert transformers.__file__.startswith(sys.argv[1]), transformers.__file__
from transformers.models.deprecated.graphormer.configuration_graphormer \\
    import GraphormerConfig
from transformers.models.deprecated.graphormer.modeling_graphormer import (
    GraphormerForGraphClassification, GraphormerModel)
from torch_geometric.data import Batch
from graphormer_sepnorm.convert import convert_graphormer, reference_inputs
from graphormer_sepnorm.data.featurize import smiles_to_ogb_graph
from graphormer_sepnorm.transforms import AddShortestPaths
torch.manual_seed(0)
config = GraphormerConfig(num_classes=1, num_hidden_layers=2,
                          embedding_dim=16, ffn_embedding_dim=16,
                          num_attention_heads=2, multi_hop_max_dist=3)
reference = GraphormerForGraphClassification(config).double().eval()
assert isinstance(reference.encoder, GraphormerModel)
graphs = [AddShortestPaths()(smiles_to_ogb_graph(s))
          for s in ('CCO', 'c1ccccc1O', '[Na+].[Cl-]')]
with torch.no_grad():
    expected = reference(**reference_inputs(
        graphs, dtype=torch.float64)).logits
    got = convert_graphormer(reference).double()(Batch.from_data_list(graphs))
print('max difference', float((got - expected).abs().max()))
assert torch.allclose(got, expected, atol=1e-9, rtol=1e-7)
'''


def test_the_real_slimmed_wheel_runs_the_reference(tmp_path):
    folder = REPO / '.whl' / gpu_bundle.REFERENCE_DIR
    wheels = sorted(folder.glob('transformers-*.whl'))
    if not wheels:
        pytest.skip(f'no transformers wheel in {folder} (python '
                    f'benchmarks/gpu_bundle.py downloads it)')
    for name in ('huggingface_hub', 'tokenizers'):
        # The carried ones are for the GPU machine's Python 3.12.
        pytest.importorskip(name, reason=f'transformers needs {name}')
    wheel = wheels[0]
    if len(wheel.name.split('-')) == 5:  # As downloaded: slim it here.
        wheel = gpu_bundle.slim_wheel(wheel, tmp_path)
    site = tmp_path / 'site'
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q',
                    '--no-deps', '--no-index', '--no-compile', '--target',
                    str(site), str(wheel)], check=True)
    assert not (site / 'transformers' / 'models' / 'bert').exists()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site),
                                                       str(REPO)]))
    result = subprocess.run([sys.executable, '-c', CHECK, str(site)],
                            env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
