r"""The environment variables the training configuration reads (a module of
its own, without imports, so that the command lines' help can name them
without loading the schema)."""

#: Environment variable that overrides ``data.root`` (a command-line
#: ``data.root=...`` still wins).
DATA_ROOT_ENV = 'GRAPHORMER_DATA_ROOT'
