"""A flow run whose worker died is marked Crashed, not left Running: Prefect's flow run heartbeats and the zombie-detection automation (docs/scheduling.md).

Every flow run a worker or the serving process starts sends a heartbeat event every
``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` seconds (``PREFECT_RUNNER_HEARTBEAT_FREQUENCY`` is Prefect's
older name for it; ``flows._env.for_deployment`` sets ``DEFAULT_HEARTBEAT_S`` unless one is set). The automation
``impcredit-crash-zombie-flow-runs`` on the server marks a flow run Crashed when, after a
heartbeat, neither another heartbeat nor an end (Completed, Failed, Cancelled, Crashed) comes
within three intervals: its worker was killed (SIGTERM, Ctrl-C, SIGKILL, the machine) and with
it the run's process. Prefect's server has no such automation of its own; ``ensure`` creates it
(the worker launcher and ``flows/serve.py`` call it when they start, ``python -m flows.zombies``
by hand), once, and again when the interval changed.
"""

from __future__ import annotations

import datetime as dt
import sys

NAME = "impcredit-crash-zombie-flow-runs"
DEFAULT_HEARTBEAT_S = 60  # as flows._env.HEARTBEAT_S
MISSED = 3  # heartbeats missed before a run is a zombie (Prefect's docs: a single miss is no proof)
ENDS = ("Completed", "Failed", "Cancelled", "Crashed")


def heartbeat_seconds() -> int:
    """The heartbeat interval of this process's Prefect settings."""
    from prefect.settings import get_current_settings

    return int(get_current_settings().flows.heartbeat_frequency or DEFAULT_HEARTBEAT_S)


def automation(heartbeat_s: int):
    """The automation: after a flow run's heartbeat, expect another one (or its end) within
    ``MISSED`` intervals; otherwise change the run's state to Crashed."""
    from prefect.client.schemas.objects import StateType
    from prefect.events.actions import ChangeFlowRunState
    from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture
    from prefect.events.schemas.events import ResourceSpecification

    return AutomationCore(
        name=NAME,
        description=f"impcredit: a flow run with no heartbeat for {MISSED * heartbeat_s} s (its worker died) is "
                    "marked Crashed (flows/zombies.py, docs/scheduling.md)",
        trigger=EventTrigger(
            after={"prefect.flow-run.heartbeat"},
            expect={"prefect.flow-run.heartbeat", *(f"prefect.flow-run.{s}" for s in ENDS)},
            match=ResourceSpecification({"prefect.resource.id": ["prefect.flow-run.*"]}),
            for_each={"prefect.resource.id"},
            posture=Posture.Proactive,
            threshold=1,
            within=dt.timedelta(seconds=MISSED * heartbeat_s),
        ),
        actions=[ChangeFlowRunState(state=StateType.CRASHED,
                                    message=f"no heartbeat for {MISSED * heartbeat_s} s: the process running this "
                                            "flow run died (its worker was stopped or killed); run it again")],
    )


def ensure(heartbeat_s: int | None = None) -> str:
    """The automation on the server of this process's ``PREFECT_API_URL``, created when missing
    or when its window is not ``MISSED`` x the interval: one line saying which."""
    from prefect.client.orchestration import get_client

    heartbeat_s = heartbeat_s or heartbeat_seconds()
    wanted = automation(heartbeat_s)
    with get_client(sync_client=True) as client:
        existing = client.read_automations_by_name(NAME)
        if any(a.trigger.within == wanted.trigger.within and a.enabled for a in existing):
            return f"automation {NAME} in place (a flow run with no heartbeat for {MISSED * heartbeat_s} s is Crashed)"
        for a in existing:
            client.delete_automation(a.id)
        client.create_automation(wanted)
    return f"automation {NAME} created (a flow run with no heartbeat for {MISSED * heartbeat_s} s is Crashed)"


if __name__ == "__main__":
    from flows import _env

    _env.for_deployment()  # before Prefect: the heartbeat interval a worker's runs will have
    print(ensure())
    sys.exit(0)
