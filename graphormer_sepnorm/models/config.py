r"""How a model's options are written once: as the typed keyword arguments
of its :obj:`__init__`, each annotated :obj:`Annotated[type, Doc(meaning)]`
with its default. Type checkers and editors read that signature; from it
:func:`options_dataclass` builds the configuration dataclass (what
:attr:`config` holds and checkpoints save, which :obj:`from_config` reads),
:func:`option_signature` writes the docstring's :obj:`Args:` and gives an
unknown argument a did-you-mean, and the configuration schema reads the
YAML :obj:`model` keys and the key table of ``configs/README.md``.

Arguments before the bare :obj:`*` are the model's options (saved with it);
keyword-only arguments after it are runtime settings (not saved)."""
import dataclasses
import difflib
import functools
import inspect
import textwrap
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Optional, TypeVar, Union

#: The two normalization schemes, :obj:`norm`'s values.
Norm = Literal['sep', 'share']
#: The names the paper gives the two :obj:`norm` values: separate norms for
#: the graph token and the nodes, or one norm shared by all tokens.
NORM_NAMES = dict(zip(typing.get_args(Norm), ('SepNorm', 'ShareNorm')))

#: The featurizations a model can be trained on: this package's ZINC and
#: OGB featurizers, PyG's :func:`torch_geometric.utils.from_smiles`, or
#: the user's own (:obj:`custom`, never refused).
Featurization = Literal['zinc', 'ogb', 'pyg', 'custom']
#: What each :obj:`Featurization` is, for messages.
FEATURIZATION_NAMES = dict(zip(typing.get_args(Featurization), (
    "ZINC's (smiles_to_zinc_graph: 1 atom-type column, 1 bond-type column)",
    "OGB's (smiles_to_ogb_graph, ogb.utils.smiles2graph: 9 atom and 3 bond "
    "columns)",
    "PyG's (torch_geometric.utils.from_smiles: 9 atom and 3 bond columns, "
    "other meanings than OGB's)",
    'a custom one')))

T = TypeVar('T', bound=type)


def refuse_featurization(model: str, data: str, source: object) -> None:
    r"""Raises a :class:`ValueError` naming both featurizations if a model
    trained on :obj:`model` graphs (from :obj:`source`, for the message) is
    given :obj:`data` graphs; :obj:`"custom"` on either side is never
    refused."""
    for name in (model, data):
        if name not in FEATURIZATION_NAMES:
            raise ValueError(
                f"Unknown featurization {name!r}; valid ones: "
                f"{', '.join(FEATURIZATION_NAMES)}")
    if 'custom' not in (model, data) and model != data:
        raise ValueError(
            f"{source} was trained on {model!r} graphs, "
            f"{FEATURIZATION_NAMES[model]}, but the data is featurized as "
            f"{data!r}, {FEATURIZATION_NAMES[data]}; featurize the data as "
            f"{model!r} (graphormer_sepnorm.data.featurize.get_featurizer"
            f"({model!r}) for SMILES) or use a model trained on {data!r} "
            f"graphs")


@dataclass(frozen=True)
class Doc:
    r"""The meaning of one option, as the metadata of its
    :obj:`Annotated` type: a one-line :obj:`text` and, where the
    configuration's validation checks one, its :obj:`range` (:obj:`"> 0"`,
    :obj:`">= 0"` or :obj:`"[0, 1)"`)."""
    text: str
    range: Optional[str] = None


@dataclass(frozen=True)
class ModelOption:
    r"""One argument of a model's :obj:`__init__`, read from its signature:
    its :obj:`name`, :obj:`type` (without :obj:`Annotated`),
    :obj:`default`, :class:`Doc` and whether it is :obj:`saved` with the
    model (an option) or a runtime setting (keyword-only)."""
    name: str
    type: Any
    default: Any
    doc: Doc
    saved: bool


def model_options(cls: type) -> list[ModelOption]:
    r"""The arguments of :obj:`cls.__init__` in order, each with the
    :class:`Doc` of its :obj:`Annotated` type."""
    init = inspect.unwrap(cls.__init__)  # type: ignore[misc]
    hints = typing.get_type_hints(init, include_extras=True)
    options = []
    for name, param in list(inspect.signature(init).parameters.items())[1:]:
        hint = hints[name]
        docs = [m for m in getattr(hint, '__metadata__', ()) if
                isinstance(m, Doc)]
        if not docs or param.default is param.empty:
            raise TypeError(f"{cls.__name__}.__init__'s argument {name} "
                            f"needs a default and an Annotated[type, "
                            f"Doc(...)] annotation")
        options.append(ModelOption(name, typing.get_args(hint)[0],
                                   param.default, docs[0],
                                   param.kind != param.KEYWORD_ONLY))
    return options


def strip_optional(type_: Any) -> tuple[Any, bool]:
    r""":obj:`(X, True)` for :obj:`Optional[X]`, else :obj:`(type_, False)`."""
    args = typing.get_args(type_)
    if typing.get_origin(type_) is Union and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return type_, False


def choices(type_: Any) -> Optional[tuple]:
    r"""The values a :obj:`Literal` type, optional or not, allows;
    :obj:`None` for other types."""
    type_, _ = strip_optional(type_)
    return (typing.get_args(type_) if typing.get_origin(type_) is Literal
            else None)


def _plain(self: Any) -> None:
    # __post_init__ of an options dataclass: sequences become lists of ints
    # (plain JSON values), and Literal options are checked.
    for f in dataclasses.fields(self):
        value = getattr(self, f.name)
        type_, _ = strip_optional(f.type)
        if value is not None and typing.get_origin(type_) is Sequence:
            setattr(self, f.name, [int(v) for v in value])
        allowed = choices(f.type)
        if allowed and value not in allowed:
            raise ValueError(f"{f.name} must be one of "
                             f"{', '.join(map(repr, allowed))}, got {value!r}")


def options_dataclass(name: str, cls: type) -> Any:
    r"""The dataclass :obj:`name` of the options (the saved arguments) of
    :obj:`cls`: one field per option with its type, default and, as field
    metadata, its :obj:`doc` and :obj:`range`. Plain values only (lists,
    not tuples): it is written as JSON beside the weights."""
    fields = []
    for o in model_options(cls):
        if not o.saved:
            continue
        default = (dict(default_factory=o.default.copy)
                   if isinstance(o.default, list) else dict(default=o.default))
        fields.append((o.name, o.type, field(
            **default, metadata={'doc': o.doc.text, 'range': o.doc.range})))
    config = dataclasses.make_dataclass(
        name, fields, namespace={'__post_init__': _plain})
    config.__module__ = cls.__module__
    config.__doc__ = (f"The options of :class:`{cls.__name__}`, read from "
                      f"its signature: what its :attr:`config` holds and its "
                      f"checkpoints save.")
    return config


def config_from(config_cls: Any, arguments: Mapping[str, Any]) -> Any:
    r"""The :obj:`config_cls` (an :func:`options_dataclass`) of an
    :obj:`__init__`'s :obj:`arguments` (its :func:`locals`)."""
    return config_cls(**{f.name: arguments[f.name]
                         for f in dataclasses.fields(config_cls)})


def unknown_option(key: str, valid: Sequence[str]) -> str:
    r"""The message for an unknown option :obj:`key`: the closest valid
    name, if one is close, and every valid one."""
    hint = difflib.get_close_matches(str(key), valid, n=1)
    did_you_mean = f" Did you mean '{hint[0]}'?" if hint else ""
    return (f"Unknown model option '{key}'.{did_you_mean} Valid options: "
            f"{', '.join(valid)}")


def args_docstring(options: Sequence[ModelOption],
                   indent: str = '    ') -> str:
    r"""The :obj:`Args:` section of a docstring, one entry per option."""
    lines = []
    for o in options:
        type_ = inspect.formatannotation(o.type)
        text = (f"{o.name} ({type_}): {o.doc.text.replace('`', '``')}"
                f" (default: :obj:`{o.default!r}`)")
        lines += textwrap.wrap(text, 76 - len(indent), initial_indent=indent,
                               subsequent_indent=indent + '    ',
                               break_on_hyphens=False)
    return '\n'.join(lines)


def option_signature(cls: T) -> T:
    r"""A class decorator for a model whose :obj:`__init__` takes its
    options as :obj:`Annotated[type, Doc(...)]` arguments: the docstring's
    ``{config_args}`` becomes their :obj:`Args:` entries, and an unknown
    keyword argument raises a :class:`TypeError` that names the closest
    option and every valid one. Type checkers and editors read the
    source's signature; :func:`inspect.signature` and :func:`help` show it
    without the :class:`Doc` metadata."""
    init = cls.__init__  # type: ignore[misc]
    options = model_options(cls)
    valid = [o.name for o in options]

    @functools.wraps(init)
    def checked_init(self: Any, *args: Any, **kwargs: Any) -> None:
        for key in kwargs:
            if key not in valid:
                raise TypeError(unknown_option(key, valid))
        init(self, *args, **kwargs)

    # What help() and inspect.signature show: the types without their Doc
    # (the docstring has them).
    signature = inspect.signature(init, eval_str=True)
    checked_init.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(annotation=typing.get_args(p.annotation)[0])
                    if hasattr(p.annotation, '__metadata__') else p
                    for p in signature.parameters.values()])
    cls.__init__ = checked_init  # type: ignore[misc]
    cls.__doc__ = (cls.__doc__ or '').replace(
        '{config_args}', args_docstring(options, ' ' * 8))
    return cls
