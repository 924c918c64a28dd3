"""toolgate: selection is retrieval, abstention is not - the experiment pipeline."""


def __getattr__(name):
    """``toolgate.__version__`` and ``from toolgate import Router``, each read when first asked for: the version
    from the installed metadata (importlib.metadata takes some 20 ms to import), the runtime with its modules."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("toolgate")
        except PackageNotFoundError:  # running from a checkout without install
            value = "0.1.0"
        globals()["__version__"] = value
        return value
    if name == "Router":
        from .core.runtime import Router
        return Router
    raise AttributeError(f"module 'toolgate' has no attribute {name!r}")
