"""The exceptions the frontend raises: each says what went wrong and where.

A wrong argument to a public call (a wrong type or value) raises the error
class of the call it was given to, and the message names the argument."""


class TandemError(Exception):
    """Base of every error the frontend raises."""


class ExportError(TandemError):
    """The module cannot be expressed in the tandem dialect (an unsupported
    op, dynamic shapes, data-dependent control flow, non-tensor outputs...),
    export() or device_guard() was given a wrong argument, or the files
    cannot be written. Nothing is written when it is raised."""


class CompileError(TandemError):
    """compile() was given a wrong option or an unusable workdir, or
    tandem-compile could not be found, could not run, refused the model or
    did not write what it should have."""


class RuntimeFailure(TandemError):
    """The compiled model refused to load or to run, or was called with
    wrong inputs (its message says why)."""
