"""Errors raised by rredcot_viz.

Every error says what was wrong, the offending value, and what to do about it, so that the CLI and the app
can show ``str(error)`` to a user without a traceback.
"""

from __future__ import annotations


class RredcotError(Exception):
    """Base class of all errors the library raises on purpose."""


class ConfigError(RredcotError, ValueError):
    """A setting has a value that is out of range or inconsistent with another setting."""


class UnknownNameError(RredcotError, KeyError):
    """A registry lookup used a name that is not registered."""

    def __init__(self, kind: str, name: str, valid: list[str]):
        self.kind, self.name, self.valid = kind, name, valid
        super().__init__(f"unknown {kind} {name!r}; valid choices: {', '.join(valid) or '(none registered)'}")

    def __str__(self) -> str:  # KeyError would wrap the message in quotes
        return self.args[0]


class ModelNotFoundError(RredcotError):
    """The requested model is neither a local path, a catalogue entry, nor in the offline Hugging Face cache."""


class ModelFetchError(RredcotError):
    """Downloading or reassembling an optional model failed (network, hash mismatch, missing chunk)."""


class QuantizationUnavailableError(RredcotError):
    """8-bit / 4-bit loading was requested where bitsandbytes cannot run (no CUDA)."""


class ContextLengthError(RredcotError, ValueError):
    """A sequence is longer than the model's context window."""

    def __init__(self, length: int, limit: int, what: str = "sequence"):
        self.length, self.limit = length, limit
        super().__init__(
            f"{what} is {length} tokens but the model's context is {limit} tokens; "
            "shorten the trace (or the reference solution), or choose a model with a longer context"
        )


class ModelOutOfMemoryError(RredcotError):
    """The accelerator ran out of memory during a model call."""


class TraceError(RredcotError, ValueError):
    """A trace is malformed (empty text, inconsistent steps, bad labels)."""


class ImportFormatError(RredcotError, ValueError):
    """A dataset file cannot be read in the requested or detected format."""


class MissingReferenceError(RredcotError, ValueError):
    """An estimator needs a reference answer or reference solution that the trace does not have."""


class SamplerError(RredcotError):
    """A sampling backend (an inference server) could not be reached, refused a request, or answered nonsense."""


class SamplerMismatchError(SamplerError):
    """The sampling server scores a fixed text differently from the loaded model: another model or tokenizer."""


class MissingProbeError(RredcotError):
    """No value probe was fitted for the loaded model and precision, or a probe file cannot be read."""
