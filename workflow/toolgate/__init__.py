"""toolgate: selection is retrieval, abstention is not - the experiment pipeline."""


def __getattr__(name):
    """``toolgate.__version__`` and ``from toolgate import Router, Decision, RouterError``, each read when first asked
    for: the version from the installed metadata (importlib.metadata takes some 20 ms to import), the runtime with
    its modules."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("toolgate")
        except PackageNotFoundError:  # running from a checkout without install
            value = "0.1.0"
        globals()["__version__"] = value
        return value
    if name in __all__[1:]:
        from .core import runtime
        return getattr(runtime, name)
    raise AttributeError(f"module 'toolgate' has no attribute {name!r}")


__all__ = ["__version__", "Router", "Decision", "RouterError"]


def __dir__():
    return sorted(set(globals()) | set(__all__))
