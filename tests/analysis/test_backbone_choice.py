"""benchmarks/analysis/backbone_choice.py: which SepNorm backbone the
package should bundle, from like-for-like pairs of best from SMILES on
validation. Hand-built runs with hand-counted wins; the committed block
against the committed runs."""
from benchmarks.analysis.backbone_choice import (backbone_choice_markdown,
                                                 backbone_choices,
                                                 backbone_pairs,
                                                 chosen_steps)
from benchmarks.analysis.from_smiles import from_smiles_sets
from benchmarks.analysis.readme_blocks import readme_markers
from benchmarks.analysis.runs import load_runs
from conftest import REPO
from test_from_smiles import BACKBONE, _run, bundled_6000  # noqa: F401

LONGER = dict(BACKBONE, pretraining={'pretraining': {'steps': 60000}})


def _pair(benchmark, bundled_val, other_val, features=(), metric='rocauc',
          other_norm='sep', epochs=(10, 4)):
    r"""SepNorm runs of one set fine-tuned from the bundled backbone and
    from the 60,000-step one (norm :obj:`other_norm`), seeds 0-2, each
    seed's validation the mean plus -0.01, 0, +0.01."""
    runs = []
    for seed, offset in enumerate((-.01, 0, .01)):
        runs.append(_run(benchmark, seed, .5, bundled_val + offset,
                         'fine-tuned', metric=metric, features=features,
                         epochs_completed=epochs[0]))
        runs.append(_run(benchmark, seed, .6, other_val + offset,
                         'fine-tuned', metric=metric, features=features,
                         norm=other_norm, init_from=LONGER,
                         epochs_completed=epochs[1]))
    return runs


def test_pairs_match_features_and_the_rule_needs_more_than_half(
        bundled_6000):
    runs = (_pair('molhiv', .70, .80, features=['morgan'])
            # Only Morgan on the bundled side: no twin, no pair.
            + [_run('molhiv', s, .5, .9, 'fine-tuned', init_from=LONGER)
               for s in range(3)]
            + _pair('clintox', .90, .85)
            # ZINC: lower MAE is better; the longer backbone wins.
            + _pair('zinc_subset', .30, .20, metric='mae', epochs=(36, 36)))
    sets = from_smiles_sets(runs)
    pairs = backbone_pairs(sets)
    assert [(p.set.short, p.features, p.other_is_better) for p in pairs] \
        == [('MolHIV', ['morgan'], True), ('ClinTox', [], False),
            ('ZINC-subset', [], True)]
    assert abs(pairs[0].other_validation - .80) < 1e-12
    [choice] = backbone_choices(sets)
    # 2 of 3: more than half.
    assert (choice.steps, choice.wins, choice.replaces_bundled) == \
        (60000, 2, True)
    assert chosen_steps([choice], 6000) == 60000
    text = backbone_choice_markdown(sets, bundled_steps=6000)
    assert ('| MolHIV (ROC-AUC (%)) | morgan | 60,000 steps | 70.00 | '
            '80.00 | 60,000 steps | 50.00 / 60.00 | 10 / 4 |') in text
    assert '| ClinTox (ROC-AUC (%)) | none | 60,000 steps | 90.00 | 85.00 ' \
        '| 6,000 steps |' in text
    assert 'better on validation in 2 of its 3 pairs; more than half' in text
    assert ('the rule chooses the 60,000-step SepNorm backbone; the '
            'package still ships the 6,000-step one') in text


def test_a_tie_in_pairs_keeps_the_bundled_backbone(bundled_6000):
    runs = _pair('molhiv', .70, .80) + _pair('clintox', .90, .85)
    [choice] = backbone_choices(from_smiles_sets(runs))
    assert (choice.wins, len(choice.pairs)) == (1, 2)
    assert not choice.replaces_bundled
    assert chosen_steps([choice], 6000) == 6000
    text = backbone_choice_markdown(from_smiles_sets(runs), 6000)
    assert 'not more than half: the bundled backbone stays' in text
    assert 'the 6,000-step SepNorm backbone; the package ships it' in text


def test_only_sepnorm_runs_are_read(bundled_6000):
    # The longer backbone's runs are ShareNorm's only: the bundled
    # backbone is SepNorm's, so there is nothing like for like.
    runs = _pair('molhiv', .70, .80, other_norm='share')
    assert backbone_pairs(from_smiles_sets(runs)) == []
    assert backbone_choice_markdown(from_smiles_sets(runs), 6000) == ''


def test_committed_block_is_the_committed_runs():
    results = REPO / 'benchmarks' / 'results'
    sets = from_smiles_sets(load_runs(results / 'runs')
                            + load_runs(results / 'reach'))
    begin, end = readme_markers('backbone-choice')
    readme = (REPO / 'benchmarks' / 'README.md').read_text()
    block = readme.split(begin + '\n', 1)[1].split(end, 1)[0]
    assert block == backbone_choice_markdown(sets), \
        'stale; run python scripts/results_table.py --readme'
