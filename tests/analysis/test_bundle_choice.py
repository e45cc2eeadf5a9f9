"""The rule that chooses the bundled models: the family with the best mean
validation over seeds, not one run's best, among Graphormer families with
two seeds or more; its table in scripts/README.md; and the shipped members
are that family's runs."""
from pathlib import Path

import pytest

from benchmarks.analysis.bundle_choice import (bundle_choice_markdown,
                                               candidates, choose_families,
                                               family_members,
                                               shipped_members,
                                               stale_bundles)
from benchmarks.analysis.readme_blocks import readme_markers
from benchmarks.analysis.runs import group_runs, load_runs
from graphormer_sepnorm.bundled import (BUNDLED_MODELS, bundled_dir,
                                        bundled_model_paths)
from graphormer_sepnorm.checkpoint import read_card
from tests.analysis.test_results_table import write_run

REPO = Path(__file__).resolve().parents[2]


def test_mean_validation_beats_one_lucky_run(tmp_path):
    """MolHIV (higher is better): 'sep' has the best single run (0.80) but
    the mean 0.70; 'share' has means 0.73; chemprop is better still but is
    not a Graphormer family, and a one-seed family is no candidate."""
    for seed, val in enumerate((0.80, 0.60)):
        write_run(tmp_path, f'sep{seed}', 'molhiv', 'sep', seed, 0.70, val,
                  'rocauc')
    for seed, val in enumerate((0.74, 0.72)):
        write_run(tmp_path, f'share{seed}', 'molhiv', 'share', seed, 0.71,
                  val, 'rocauc')
    for seed in (0, 1):
        write_run(tmp_path, f'c{seed}', 'molhiv', None, seed, 0.77, 0.90,
                  'rocauc', family='chemprop D-MPNN')
    write_run(tmp_path, 'lone', 'molhiv', 'sep', 0, 0.9, 0.99, 'rocauc',
              benchmark='molhiv', variant='from SMILES')
    groups = group_runs(load_runs(tmp_path))
    assert [g.label for g in candidates(groups, 'molhiv')] == [
        'Graphormer (ShareNorm)', 'Graphormer + SepNorm']
    choice = choose_families(groups)
    assert list(choice) == ['molhiv']
    assert choice['molhiv'].chosen.label == 'Graphormer (ShareNorm)'


def test_a_family_with_a_forest_is_no_candidate(tmp_path):
    """MolHIV: the blended family has the best mean validation (0.90), but
    its forests (162,500 nodes, 6.5 MB per member) stay out of the
    package: the plain family is chosen, and the table says why the other
    is not."""
    forest = {'trees_per_target': 50, 'nodes': 162_500, 'weight': 0.5}
    for seed in (0, 1):
        write_run(tmp_path, f'plain{seed}', 'molhiv', 'sep', seed, 0.75,
                  0.83, 'rocauc', benchmark='molhiv', variant='decayed')
        write_run(tmp_path, f'forest{seed}', 'molhiv', 'sep', seed, 0.78,
                  0.90, 'rocauc', benchmark='molhiv', variant='forest',
                  forest=forest)
    groups = group_runs(load_runs(tmp_path))
    assert [g.label for g in candidates(groups, 'molhiv')] == [
        'Graphormer + SepNorm, decayed']
    table = bundle_choice_markdown(groups)
    assert ('- Not a candidate for `--model molhiv`: Graphormer + SepNorm, '
            'forest (mean validation 90.00): its blended forest takes 6.5 MB '
            'per member, too large to ship in the package.') in table


def test_lower_error_wins_and_a_tie_goes_to_the_steadier_family(tmp_path):
    """ZINC (MAE, lower is better): two families with mean validation 0.20;
    the one whose seeds agree (0.20, 0.20) wins over (0.10, 0.30); a family
    at 0.25 comes last."""
    for name, norm, vals in (('steady', 'sep', (0.20, 0.20)),
                             ('spread', 'share', (0.10, 0.30))):
        for seed, val in enumerate(vals):
            write_run(tmp_path, f'{name}{seed}', 'zinc_subset', norm, seed,
                      0.3, val)
    for seed, val in enumerate((0.25, 0.25)):
        write_run(tmp_path, f'v{seed}', 'csv', 'sep', seed, 0.3, val,
                  benchmark='zinc_subset', variant='from SMILES')
    ranked = choose_families(group_runs(load_runs(tmp_path)))['zinc'].ranked
    assert [g.label for g in ranked] == [
        'Graphormer + SepNorm', 'Graphormer (ShareNorm)',
        'Graphormer + SepNorm, from SMILES']


def test_table_marks_the_choice_and_scores_its_ensemble_by_hand(tmp_path):
    """Two seeds with test predictions on two molecules (labels 1 and 3):
    members predict (0, 4) and (2, 4), so the ensemble predicts (1, 4) with
    MAE (0 + 1) / 2 = 0.5; the members' own test MAEs (as recorded) are
    0.6 and 0.4."""
    for seed, (test, values) in enumerate(((0.6, (0, 4)), (0.4, (2, 4)))):
        write_run(tmp_path, f's{seed}', 'zinc_subset', 'sep', seed, test,
                  0.2 + seed / 10, predictions={0: (1.0, values[0]),
                                                1: (3.0, values[1])})
    table = bundle_choice_markdown(group_runs(load_runs(tmp_path)))
    assert ('| `zinc` | **Graphormer + SepNorm** (chosen) | 0,1 '
            '| 0.250 ± 0.071 | 0.500 ± 0.141 | 0.500 |') in table
    assert ('- `--model zinc`: the seed ensemble of Graphormer + SepNorm on '
            'zinc_subset (seeds 0, 1), best of 1 families by mean '
            'validation MAE (0.250).') in table


def test_no_candidate_no_table(tmp_path):
    write_run(tmp_path, 'a', 'zinc_subset', 'sep', 0, 0.3, 0.3)
    assert bundle_choice_markdown(group_runs(load_runs(tmp_path))) == ''


@pytest.fixture(scope='module')
def committed_groups():
    return group_runs(load_runs(REPO / 'benchmarks' / 'results' / 'runs'))


def test_committed_scripts_readme_block_is_the_committed_runs(
        committed_groups):
    begin, end = readme_markers('bundle-choice')
    readme = (REPO / 'scripts' / 'README.md').read_text()
    committed = readme.split(begin + '\n', 1)[1].split(end, 1)[0]
    assert committed == bundle_choice_markdown(committed_groups), (
        "scripts/README.md's bundle-choice block is stale; run python "
        "scripts/results_table.py --readme")


@pytest.mark.parametrize('name', [name for name, entry in
                                  BUNDLED_MODELS.items()
                                  if entry.single_of is None])
def test_shipped_members_are_the_chosen_family(name, committed_groups):
    """Every member file of a bundled ensemble is one run of the family the
    rule chooses (same plan, norm and seed), and every seed is shipped."""
    chosen = choose_families(committed_groups)[name].chosen
    assert shipped_members(name) == family_members(chosen), (
        f'--model {name} ships other runs than the family the rule chooses '
        f'({chosen.label}); bundle its runs (scripts/README.md, "Bundle your '
        f'own")')


def test_members_are_read_from_the_cards_of_the_member_files(tmp_path):
    """Two member files of zinc written here with the runs their cards
    name (seeds 3 and 5 of plan p.yaml); a folder without members ships
    none."""
    from graphormer_sepnorm.checkpoint import save_model
    from tests.bundled.bundle_helpers import tiny_model, zinc_card
    for seed in (3, 5):
        card = zinc_card({'name': 'zinc_subset'})
        card.extra.update(protocol={'plan': 'p.yaml'}, norm='share',
                          seed=seed)
        save_model(tmp_path / f'zinc_seed{seed}.safetensors',
                   tiny_model(seed), card)
    assert shipped_members('zinc', tmp_path) == {('p.yaml', 'share', 3),
                                                 ('p.yaml', 'share', 5)}
    assert shipped_members('zinc', tmp_path / 'empty') == set()


def test_a_family_that_takes_the_lead_makes_its_bundle_stale(tmp_path):
    """zinc_subset: plan A's family (mean validation 0.25) is shipped;
    plan B's runs arrive at 0.15, so the rule now chooses B and the
    shipped members are stale; shipping B's runs makes them current."""
    for plan, val in (('a.yaml', 0.25), ('b.yaml', 0.15)):
        for seed in (0, 1):
            write_run(tmp_path, f'{plan}{seed}', 'csv', 'sep', seed, 0.3,
                      val, benchmark='zinc_subset', variant=plan,
                      protocol={'plan': plan, 'trial': plan})
    groups = group_runs(load_runs(tmp_path))
    old = {('a.yaml', 'sep', 0), ('a.yaml', 'sep', 1)}
    new = {('b.yaml', 'sep', 0), ('b.yaml', 'sep', 1)}
    stale = stale_bundles(groups, {'zinc': old}.get)
    assert [(c.name, family_members(c.chosen)) for c in stale] == [
        ('zinc', new)]
    assert stale_bundles(groups, {'zinc': new}.get) == []


@pytest.mark.parametrize('name', [name for name, entry in
                                  BUNDLED_MODELS.items()
                                  if entry.single_of is not None])
def test_a_single_model_is_its_ensembles_best_validation_member(name):
    entry = BUNDLED_MODELS[name]
    members = bundled_model_paths(entry.single_of)
    scores = {path: read_card(path)[0].extra['evaluation']['val']
              for path in members}
    metric = next(iter(scores.values()))['metric']
    pick = (min if metric == 'mae' else max)(
        scores, key=lambda path: scores[path]['value'])
    assert bundled_model_paths(name) == [pick]
    assert pick.parent == bundled_dir()
