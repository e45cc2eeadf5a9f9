r"""The results of the committed runs as the READMEs show them: run
records (:mod:`.runs`), Welch comparisons (:mod:`.comparisons`), how
numbers, metrics and comparisons are written (:mod:`.formatting`), tables
and verdicts (:mod:`.results`), what the runs say in sentences
(:mod:`.findings`), test-prediction scores and seed ensembles
(:mod:`.test_predictions`), tuning tables (:mod:`.tuning`), plots
(:mod:`.result_plots`) and the graph-token geometry report
(:mod:`.graph_token_report`, :mod:`.graph_token_summary`,
:mod:`.graph_token_cli`); the READMEs' generated blocks are replaced by
:mod:`.readme_blocks`, and a benchmark's report is printed and written by
:mod:`.benchmark_report`. The geometry metrics themselves are library
code: :mod:`graphormer_sepnorm.analysis.graph_token`."""
