"""solver: candidate paths, formulations (TE, placement, design), one solver seam over
HiGHS / OR-Tools / PuLP, independent result checks, failure sweeps, and the planning tasks both front doors
run (:mod:`backbone.solver.tasks`)."""
