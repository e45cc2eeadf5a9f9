"""Small copies of the real benchmark data for the baseline tests (imported
by their test modules)."""
import csv
import gzip

from conftest import shared_path

#: Real MolHIV SMILES that RDKit >= 2024.09 rejects (an Al oxalate complex
#: and a B complex in OGB's scaffold test split, an Al complex in valid).
MOLHIV_BAD = {
    137: 'O=C1O[Al]23(OC1=O)(OC(=O)C(=O)O2)OC(=O)C(=O)O3',
    987: 'Cc1ccc([B-2]2(c3ccc(C)cc3)=NCCO2)cc1',
    12882: ('Oc1ccc(C2Oc3cc(O)cc4c3C(=[O+][AlH3-3]35([O+]=C6c7c(cc(O)cc7'
            '[OH+]3)OC(c3ccc(O)cc3O)C6O)([O+]=C3c6c(cc(O)cc6[OH+]5)OC(c5ccc'
            '(O)cc5O)C3O)[OH+]4)C2O)c(O)c1'),
}


def molhiv_rows() -> list[list[str]]:
    """The rows (HIV_active, smiles, mol_id) of the real mapping/mol.csv.gz,
    row i = OGB graph i."""
    with gzip.open(shared_path('ogbg_molhiv', 'mapping', 'mol.csv.gz'),
                   'rt', newline='') as f:
        return list(csv.reader(f))[1:]


def ogb_split(name: str) -> list[int]:
    """OGB's scaffold split indices (train, valid or test)."""
    with gzip.open(shared_path('ogbg_molhiv', 'split', 'scaffold',
                               f'{name}.csv.gz'), 'rt') as f:
        return [int(line) for line in f]


def small_molhiv(root, sizes=(40, 20, 30)) -> dict[str, list[int]]:
    """The real MolHIV molecules (mol.csv.gz linked) with a small scaffold
    split: the first train/valid/test indices of OGB's, the first 3
    positives of each, and the rejected molecules 12882 (valid) and 137
    (test). Returns the split written (OGB names)."""
    (root / 'mapping').mkdir(parents=True)
    (root / 'mapping' / 'mol.csv.gz').symlink_to(
        shared_path('ogbg_molhiv', 'mapping', 'mol.csv.gz'))
    (root / 'split' / 'scaffold').mkdir(parents=True)
    positive = [row[0] == '1' for row in molhiv_rows()]
    split = {}
    for name, size, extra in zip(('train', 'valid', 'test'), sizes,
                                 ([], [12882], [137])):
        ids = ogb_split(name)
        positives = [i for i in ids if positive[i]][:3]
        split[name] = sorted(set(ids[:size] + positives + extra))
        with gzip.open(root / 'split' / 'scaffold' / f'{name}.csv.gz',
                       'wt') as f:
            f.write(''.join(f'{i}\n' for i in split[name]))
    return split


def small_zinc(root, sizes=(60, 20, 20)) -> dict[str, list[dict]]:
    """The first rows of the real ZINC-subset SMILES splits in
    ``<root>/smiles/``. Returns the rows written per split."""
    (root / 'smiles').mkdir(parents=True)
    written = {}
    for split, size in zip(('train', 'val', 'test'), sizes):
        with open(shared_path('ZINC-proxy', 'smiles', f'{split}.csv'),
                  newline='') as f:
            rows = list(csv.DictReader(f))[:size]
        with open(root / 'smiles' / f'{split}.csv', 'w', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=['smiles', 'y'])
            writer.writeheader()
            writer.writerows(rows)
        written[split] = rows
    return written
