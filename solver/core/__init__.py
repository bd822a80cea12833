"""What every solver concern builds on.

* :mod:`~backbone.solver.core.problem`: the labelled sparse :class:`LinearProgram` behind the backend protocol.
* :mod:`~backbone.solver.core.sparse`: sparse selectors and incidences.
* :mod:`~backbone.solver.core.deadline`: one wall-clock :class:`Deadline` per solve.
* :mod:`~backbone.solver.core.progress`: progress callbacks.
* :mod:`~backbone.solver.core.processes`: worker processes that die with their parent.
* :mod:`~backbone.solver.core.options`: the options base model.
* :mod:`~backbone.solver.core.export`: LP and MPS export of a model.
"""
