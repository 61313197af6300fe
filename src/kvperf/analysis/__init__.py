"""Judgement over measured numbers: effect estimates on logs, the verdict rule (with its
multiple-testing correction, rank check, outlier screen and runs-needed estimate), its
calibration by simulation, change-point detection, gates, bisect decisions and sweeps.

The statistics (``effect``, ``paired``, ``ranks``, ``multiple``, ``outliers``, ``power``,
``changepoint``, ``calibration``) are pure functions of numbers (numpy/scipy/stdlib only). The
modules that judge runs (``comparison``, ``verdict``, ``series``, ``gates``, ``instructions``,
``sweeps``, ``regressions``, ``bisect``, ``stored``) read result rows (``results``), stored
history (``store``) or definitions' KPIs, never a server or a file. Import the submodules
directly, e.g. ``from kvperf.analysis.verdict import judge``.
"""
