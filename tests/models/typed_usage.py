# Read by mypy in tests/models/test_types.py, never imported: a user's code
# with the model's type revealed and two mistakes a type checker must flag.
from graphormer_sepnorm import GraphormerSepNorm

model = GraphormerSepNorm(num_layers=2, hidden_channels=32, norm='share',
                          attention_buckets=1)
reveal_type(model)  # noqa: F821 (mypy's)
misspelt = GraphormerSepNorm(hidden_channel=64)
not_a_norm = GraphormerSepNorm(norm='batch')
