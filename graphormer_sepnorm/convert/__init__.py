r"""Import weights of the reference Graphormer (the port of Microsoft's
Graphormer in Hugging Face :obj:`transformers`,
:class:`GraphormerForGraphClassification` / :class:`GraphormerModel`) into
:class:`~graphormer_sepnorm.GraphormerSepNorm`.

:func:`convert_graphormer` builds a model with the same architecture in
ShareNorm mode (:obj:`norm="share"`, every norm one
:class:`~torch.nn.LayerNorm`) whose outputs match the reference's in
evaluation mode (tested to :math:`10^{-5}` relative error in float64, see
:obj:`tests/test_convert.py`) on graphs preprocessed by
:class:`~graphormer_sepnorm.transforms.AddShortestPaths`.
:func:`to_sepnorm` then turns any ShareNorm model (converted or not) into a
SepNorm model initialised from it, to fine-tune pretrained checkpoints
(PCQM4M Graphormer) with SepNorm.

How the reference's weights map onto ours:

* **Atom table.** The reference has one :obj:`num_atoms + 1`-row table with
  512 rows per feature column: value :math:`v` of column :math:`c` is row
  :math:`v + 512c + 3` (:obj:`convert_to_single_emb` adds :math:`512c + 1`,
  :obj:`preprocess_item` adds 1 twice). Ours keeps only the rows of the
  vocabulary, :obj:`atom_vocab_sizes` (default: the nine OGB atom feature
  dimensions).
* **Degrees.** The reference sums an in-degree and an out-degree embedding,
  row :math:`\deg + 1`, but its preprocessing feeds both with the same row
  sums of the adjacency matrix. Our single table is the sum of the two
  tables: exact for undirected graphs (every molecule dataset, where in- and
  out-degree coincide). With :obj:`directed=True` the two tables are copied
  separately and our model uses the true in- and out-degree, which differs
  from the reference on directed graphs (there it is a starting point, not an
  equivalent model).
* **Spatial encoding.** Row :math:`d + 1` is distance :math:`d`; row 511
  (distance 510, the reference's "unreachable") is our unreachable row.
* **Edges.** The reference's edge table is read at :math:`v + 512c + 3` by the
  multi-hop encoding (ids of :obj:`input_edges`) but at :math:`v + 512c + 2`
  by the single-edge encoding (ids of :obj:`attn_edge_type`); the rows of the
  configured :obj:`edge_type` are copied. Row 0 (padding, "no edge") must be
  zero, as the reference keeps it (:obj:`padding_idx=0`).
* **Multi-hop matrices.** :obj:`edge_dis_encoder.weight` viewed as
  :obj:`[num_edge_dis, heads, heads]`; the first :obj:`multi_hop_max_dist` are
  ours.
* **Attention.** :obj:`q_proj`, :obj:`k_proj`, :obj:`v_proj` are stacked into
  our fused :obj:`qkv` (the reference scales :math:`q` by
  :math:`d^{-1/2}` after its bias, as scaled dot-product attention does).
* **Head.** :obj:`lm_head_transform_weight` :math:`\to` GELU :math:`\to`
  :obj:`layer_norm` :math:`\to` :obj:`classifier` (a bias-free linear layer
  plus one scalar :obj:`lm_output_learned_bias`) become our
  :obj:`head_transform`, :obj:`head_norm` and :obj:`head` (the scalar bias
  copied into every output's bias).
* **Final norm.** The reference builds the encoder's final LayerNorm in
  pre-LN mode but never applies it, so the converted model has
  :obj:`final_norm=False`.
* **Attention masking.** The reference's collator sets the bias to
  :math:`-\infty` where :obj:`spatial_pos >= spatial_pos_max` (distance
  :math:`\ge` :obj:`spatial_pos_max - 1`, unreachable included when
  :obj:`spatial_pos_max <= 511`): ours is
  :obj:`max_attention_distance = spatial_pos_max - 2`.

Intentional differences of the converted model (outputs identical on the
graphs the reference accepts): vocabularies sized from the data (ids beyond
them raise a readable error instead of silently reading a neighbouring
column's rows); degrees above :obj:`max_degree` and distances above
:obj:`max_distance` share the last embedding instead of indexing out of the
table; paths of length 510 and more are not declared unreachable; on ties
between shortest paths the multi-hop encoding may follow a different (equally
short) path than the reference's Floyd-Warshall reconstruction.

Loading a saved directory needs :obj:`transformers` (an optional dependency:
:obj:`pip install "graphormer-sepnorm[reference]"` or
:obj:`pip install "transformers>=4.41,<4.58"`); converting an instance or a
state dict with a plain configuration :obj:`dict` does not.

One file per job:

* :mod:`~.layout`: the reference's table layout and the vocabularies
  (:func:`default_vocab_sizes`);
* :mod:`~.reference`: loading a saved reference (:func:`load_hf_graphormer`)
  and the checks of its configuration (:class:`ConversionError`);
* :mod:`~.weights`: :func:`convert_graphormer`, the weight mapping;
* :mod:`~.sepnorm`: :func:`to_sepnorm`;
* :mod:`~.inputs`: :func:`reference_inputs`, the reference's inputs from our
  graphs.
"""
from .inputs import reference_inputs
from .layout import (OGB_ATOM_VOCAB_SIZES, OGB_BOND_VOCAB_SIZES,
                     ZINC_ATOM_VOCAB_SIZES, ZINC_BOND_VOCAB_SIZES,
                     default_vocab_sizes)
from .reference import ConversionError, load_hf_graphormer
from .sepnorm import to_sepnorm
from .weights import convert_graphormer

__all__ = [
    'ConversionError', 'convert_graphormer', 'load_hf_graphormer',
    'to_sepnorm', 'reference_inputs', 'OGB_ATOM_VOCAB_SIZES',
    'OGB_BOND_VOCAB_SIZES', 'ZINC_ATOM_VOCAB_SIZES', 'ZINC_BOND_VOCAB_SIZES',
    'default_vocab_sizes'
]
