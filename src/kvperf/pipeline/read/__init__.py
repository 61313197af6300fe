"""The read side: workflows that read stored results and render models, never starting a
server or a build — report pages (report, history_report), history/track/db/compare-results
(stored), change points (regressions) and doctor. Imports nothing of pipeline/run, sides or
definitions (an import-linter contract)."""
