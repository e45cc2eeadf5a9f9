r"""A random forest over the molecule features, blended with the network
(:obj:`model.forest_trees`): :class:`FeatureForest` holds its trees as
tensors; :func:`fit_feature_forest` fits it on the training split and
:func:`choose_blend_weight` picks its weight on validation."""
from .fitting import (BLEND_WEIGHTS, choose_blend_weight, fit_feature_forest,
                      forest_from_estimators)
from .trees import FOREST_MODULE, FeatureForest, model_forest

__all__ = ['FeatureForest', 'FOREST_MODULE', 'model_forest',
           'fit_feature_forest', 'forest_from_estimators',
           'choose_blend_weight', 'BLEND_WEIGHTS']
