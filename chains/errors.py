"""The errors of the ready chains; every other error is in :mod:`guardrail.errors`.

::

    guardrail.ModelLoadError
    └── LocalModelUnavailable  the local llama.cpp model dies or hangs when it generates
"""

from __future__ import annotations

from guardrail.errors import ModelLoadError


class LocalModelUnavailable(ModelLoadError):
    """The local llama.cpp model cannot generate on this machine (its probe process died by a
    signal such as SIGILL, exited with an error or timed out); the message gives the reason and
    the fix."""
