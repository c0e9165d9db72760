"""A worker that a test's timeout ends is replaced and the run goes on.

pytest-xdist 3.8.0's loadscope and loadgroup scheduling deadlock there instead (its issues 1323,
1327 and 1378, fixed on its main branch after that release): the dead worker's finished groups go
back on the queue and reach a new worker as empty orders, which no completion ever answers, and a
new worker handed a group of one test waits for a second that never comes. A CI run whose worker
was ended by pytest-timeout sat there until the job's own limit. This mends the two methods for
that release alone (tests/test_xdist_restart.py runs a crashing suite against whatever is
installed)."""

from __future__ import annotations

import xdist
from xdist.scheduler.loadscope import LoadScopeScheduling

MENDED = "3.8.0"


def _remove_node(self: LoadScopeScheduling, node) -> str | None:
    workload = self.assigned_work.pop(node)
    if not self._pending_of(workload):
        return None
    crashitem = next(nodeid for unit in workload.values() for nodeid, done in unit.items() if not done)
    # reported failed by the caller and not run again: a test that ends its worker would end the
    # next one too
    for unit in workload.values():
        if crashitem in unit:
            unit[crashitem] = True
    # only groups with tests still to run go back on the queue: a finished one is an empty order
    for scope, unit in workload.items():
        if not all(unit.values()):
            self.workqueue[scope] = unit
    for other in self.assigned_work:
        self._reschedule(other)
    return crashitem


def _reschedule(self: LoadScopeScheduling, node) -> None:
    if node.shutting_down:
        return
    # a worker runs a test only once it holds the next one or has been told that none will come:
    # keep it over two tests while work is queued, and tell it as soon as none is left
    try:
        while self.workqueue and self._pending_of(self.assigned_work[node]) <= 2:
            self._assign_work_unit(node)
        if not self.workqueue:
            node.shutdown()
    except OSError:
        # the worker ended right after its last report (a test that ends its process): its channel is
        # closed, and its "down" event comes next, where remove_node queues again what it was handed
        return


def install() -> bool:
    """Mend the scheduler when the installed pytest-xdist is the release this was written for."""
    if xdist.__version__ != MENDED:
        return False
    LoadScopeScheduling.remove_node = _remove_node  # type: ignore[method-assign]
    LoadScopeScheduling._reschedule = _reschedule  # type: ignore[method-assign]
    return True
