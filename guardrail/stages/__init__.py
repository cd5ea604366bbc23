"""The stage contract, for writing a stage of your own: subclass :class:`Stage`, read the
:class:`PipelineState`, return a :class:`StageUpdate` (see :mod:`guardrail.stages.base`)."""

from guardrail.stages.base import Backends, PipelineState, Stage, StageUpdate

__all__ = ["Backends", "PipelineState", "Stage", "StageUpdate"]
