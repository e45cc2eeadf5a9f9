"""A small model trained here, in seconds on one CPU thread, to count the
nitrogen atoms of a molecule: the truth the atom contributions are checked
against. Test modules import the fixture they use."""
import functools
import random

import pytest
import torch
from rdkit import Chem

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.checkpoint import ModelCard
from graphormer_sepnorm.data.featurize.smiles import _quiet_rdkit
from graphormer_sepnorm.data.molecule_graphs import collate, prepare_graph
from graphormer_sepnorm.predict import Predictor

MAX_NODES = 40


def chain_smiles(rng: random.Random) -> str:
    """A random acyclic molecule of C, N and O (branches, no rings) that
    RDKit accepts."""
    while True:
        atoms = [rng.choice('CCCNO') for _ in range(rng.randint(3, 12))]
        text = atoms[0]
        for atom in atoms[1:]:
            text += f'({atom})' if rng.random() < 0.2 else atom
        with _quiet_rdkit():
            if Chem.MolFromSmiles(text) is not None:
                return text


def nitrogens(smiles: str) -> int:
    return sum(1 for c in smiles if c == 'N')


@pytest.fixture(scope='module')
def counting_predictor():
    """A Predictor trained to output the number of N atoms (mean absolute
    error below 0.15 on held-out molecules, checked), trained once per
    process."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield Predictor(trained_counting_model(),
                    ModelCard({}, 'zinc', 'regression', 0.0, 1.0))
    torch.set_num_threads(threads)


@functools.lru_cache(maxsize=1)
def trained_counting_model() -> GraphormerSepNorm:
    """The model of :func:`counting_predictor`."""
    rng = random.Random(0)
    smiles = [chain_smiles(rng) for _ in range(400)]
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=2, hidden_channels=16,
                              ffn_channels=16, num_heads=4, dropout=0.0,
                              attention_dropout=0.0, activation_dropout=0.0,
                              max_nodes=MAX_NODES)
    layout = model.layout_options()
    graphs = [prepare_graph(s, 'zinc', MAX_NODES) for s in smiles]
    targets = torch.tensor([float(nitrogens(s)) for s in smiles])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    model.train()
    for step in range(250):
        pick = [rng.randrange(300) for _ in range(32)]
        out = model(collate([graphs[k] for k in pick], layout))[:, 0]
        loss = torch.nn.functional.l1_loss(out, targets[pick])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        held = model(collate(graphs[300:], layout))[:, 0]
    error = float((held - targets[300:]).abs().mean())
    assert error < 0.15, f'the counting model did not learn: MAE {error}'
    return model
