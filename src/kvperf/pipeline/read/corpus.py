"""`report --definitions`: a commit's (and its baseline's) definition rows and job notes
read from the database (store/corpus.py), judged (analysis/corpus.py), the markdown and
HTML written when asked."""

from __future__ import annotations

from kvperf.analysis.corpus import CorpusReport, corpus_report
from kvperf.core.errors import UsageError
from kvperf.pipeline.request.stored import CorpusReportRequest
from kvperf.pipeline.world import World
from kvperf.report.corpus import html_page, markdown
from kvperf.store import corpus


def corpus_page(request: CorpusReportRequest, world: World) -> CorpusReport:
    assert request.store.url is not None
    with world.database(request.store.url) as engine:
        commit = corpus.resolve(engine, request.commit, "--commit")
        rows = corpus.definition_rows(engine, commit)
        if not rows:
            raise UsageError(f"--commit {request.commit}: the database has no definition "
                             "results for it (kvperf track run / run --definitions store "
                             "them)")
        baseline = (None if request.baseline is None else
                    corpus.resolve(engine, request.baseline, "--baseline"))
        base_rows = corpus.definition_rows(engine, baseline) if baseline else []
        if baseline is not None and not base_rows:
            raise UsageError(f"--baseline {request.baseline}: the database has no "
                             "definition results for it")
        notes = [f"job {n.job_id} ({n.state}): {line}"
                 for n in corpus.job_notes(engine, commit) for line in n.note.splitlines()]
    found = corpus_report(commit, rows, baseline, base_rows, notes, request.rule)
    if request.markdown:
        request.markdown.write_text(markdown(found))
    if request.html:
        request.html.write_text(html_page(found))
    return found
