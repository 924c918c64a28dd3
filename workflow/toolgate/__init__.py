"""toolgate: selection is retrieval, abstention is not - the experiment pipeline."""
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("toolgate")
except PackageNotFoundError:  # running from a checkout without install
    __version__ = "0.1.0"


def __getattr__(name):
    """``from toolgate import Router``: the runtime is imported only when asked for."""
    if name == "Router":
        from .router.runtime import Router
        return Router
    raise AttributeError(f"module 'toolgate' has no attribute {name!r}")
