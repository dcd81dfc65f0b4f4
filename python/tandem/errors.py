"""The exceptions the frontend raises: each says what went wrong and where."""


class TandemError(Exception):
    """Base of every error the frontend raises."""


class ExportError(TandemError):
    """The module cannot be expressed in the tandem dialect (an unsupported
    op, dynamic shapes, data-dependent control flow, non-tensor outputs...).
    Nothing is written when it is raised."""


class CompileError(TandemError):
    """tandem-compile refused the exported model or could not be found."""


class RuntimeFailure(TandemError):
    """The compiled model refused to load or to run (its message says why)."""
