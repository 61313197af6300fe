"""Pure statistics for kvperf: paired A/B comparison, multiple-testing
correction, power analysis, the verdict rule and change-point detection.

Everything here is a pure function of numbers (numpy/scipy/stdlib only); no I/O,
no knowledge of servers, runs or reports. Import the submodules directly, e.g.
``from kvperf.analysis.paired import geomean_ratio_ci``.
"""
