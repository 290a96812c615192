"""``goldeneval accept`` from the Dagster UI: the op of the job ``accept_run``.

Launched from the Launchpad with the run to accept, why, and who accepts it (op config), it
calls the one domain function, :func:`goldeneval.history.accepted.accept`, on the suite file's
store: exactly what ``goldeneval accept RUN --reason TEXT --by NAME`` does.  What it recorded
is the op's output metadata (the run, its series, who, when and why) and a line in the event
log; a refusal (an unknown or incomplete run, an empty reason) fails the run with goldeneval's
one-line reason.  From then on the ``no_regression`` check of the run's series says
"compared with accepted level run <id> (accepted by <who>: <why>)".
"""

from typing import Any

import dagster as dg
from pydantic import Field

from assets.names import STORE_POOL
from goldeneval.core.errors import GoldenEvalError
from goldeneval.history.accepted import Accepted, accept
from resources.goldeneval import GoldenEvalResource

__all__ = ["ACCEPT_OP", "AcceptRunConfig", "accept_op", "acceptance_metadata"]

ACCEPT_OP = "accept"


class AcceptRunConfig(dg.Config):
    """What a person fills in on the Launchpad."""

    run_id: str = Field(description="The stored run to accept: its id or a unique prefix (goldeneval runs lists them).")
    reason: str = Field(description="Why it is accepted as its series' level (required, not empty).")
    by: str = Field(description="Who accepts it (required: the open-source UI does not know who launched a run).")


def acceptance_metadata(accepted: Accepted) -> dict[str, Any]:
    """The op's output metadata: what was accepted, by whom, when and why."""
    run, acceptance = accepted.run, accepted.acceptance
    return {
        "stored_run_id": run.id,
        "set": run.set_id,
        "series": run.model,
        "accepted_by": acceptance.accepted_by,
        "accepted_at": acceptance.accepted_at.isoformat(),
        "reason": acceptance.reason,
        "accepted": accepted.line,
    }


@dg.op(
    name=ACCEPT_OP,
    pool=STORE_POOL,
    description="Accept a stored run as its series' level: runs judged against the accepted level (baseline: "
    "accepted, the nightly's default) compare with it until a later run passes the gate. The same as "
    "goldeneval accept RUN --reason TEXT --by NAME.",
)
def accept_op(
    context: dg.OpExecutionContext, config: AcceptRunConfig, goldeneval: GoldenEvalResource
) -> dg.Output[str]:
    try:
        accepted = accept(goldeneval.open_store(), config.run_id, config.reason, config.by)
    except GoldenEvalError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    context.log.info(accepted.line)
    return dg.Output(accepted.run.id, metadata=acceptance_metadata(accepted))
