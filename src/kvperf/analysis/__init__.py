"""Pure statistics for kvperf: effect estimates on logs, the verdict rule (with its
multiple-testing correction, rank check, outlier screen and runs-needed estimate), its
calibration by simulation, and change-point detection.

Everything here is a pure function of numbers (numpy/scipy/stdlib only); no I/O,
no knowledge of servers, runs or reports. Import the submodules directly, e.g.
``from kvperf.analysis.verdict import judge``.
"""
