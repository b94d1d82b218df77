"""End to end in chromium with a real Celery worker: two runs of the word/topic job, "compare with
the previous run" from the newer run's application page, the outputs side by side with their
fates (checked against the oracle from the input lines), then one output explained with its
additive check."""

from __future__ import annotations

import pytest

from tests.browser.conftest import SCREENSHOT_DIR
from tests.lineage_server.tracing.captured import capture_runs_in_own_driver, lineage_of, topic_totals
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.browser, pytest.mark.spark, pytest.mark.django_db(transaction=True),
              pytest.mark.timeout(900)]  # a cold worker Spark session twice, beside another process's Spark


def test_compare_with_the_previous_run_and_explain_one_output(live_server, agent_token, analyst_page, tmp_path):
    old, new = capture_runs_in_own_driver(live_server.url, agent_token, [(tmp_path / "old", 3), (tmp_path / "new", 4)])
    page = analyst_page
    page.set_viewport_size({"width": 1280, "height": 800})
    with celery_worker(tmp_path / "worker.log", LINEAGE_TRACE_SPARK_AT_START="false"):
        page.goto(f"{live_server.url}/applications/{new.app_id}/")
        page.click("#compare-previous")
        page.wait_for_selector("#diff-page[data-state='ready']", timeout=400_000)
        before, after = topic_totals(old.lines), topic_totals(new.lines)
        shown = page.evaluate("() => [...document.querySelectorAll('#diff-outputs tbody tr')]"
                              ".map((tr) => [JSON.parse(tr.cells[0].textContent), tr.dataset.fate])")
        assert dict(shown) == {t: "added" if t not in before else "removed" if t not in after else
                               "unchanged" if before[t] == after[t] else "changed" for t in set(before) | set(after)}
        assert old.app_id in page.inner_text(".app-header")
        page.screenshot(path=SCREENSHOT_DIR / "diff_1_outputs_1280.png")
        row = page.locator("#diff-outputs tbody tr", has_text='"incident"')
        row.locator("button.explain").click()
        page.wait_for_selector("#explanation", timeout=400_000)
        page.screenshot(path=SCREENSHOT_DIR / "diff_2_explained_1280.png")
        was = lineage_of("incident", old.lines, old.topic_lines)
        now = lineage_of("incident", new.lines, new.topic_lines)
        added = page.eval_on_selector_all("#explanation-inputs tr.input-added td:nth-child(2)",
                                          "tds => tds.map((td) => JSON.parse(td.textContent))")
        assert sorted(added) == sorted((now - was).elements())[:len(added)] and added
        assert "adds up" in page.inner_text("#additive-check")
