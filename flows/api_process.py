"""The shared local API's process (``flows.api``): what identifies it beyond its pid, and signals sent only to it.

A process id is reused once its process is gone; a state file naming one may name anything
later. So the state records the API's start time and command line too, and nothing is signalled
unless all three match (``ours``); its process group only when it leads the session it was started
in (``own_session``: ``flows.api`` starts it with ``start_new_session``).
"""

from __future__ import annotations

import os


def identity(pid: int) -> dict | None:
    """What identifies process ``pid`` beyond its id: its start time (clock ticks after boot,
    ``/proc/<pid>/stat`` field 22; psutil's create time where there is no /proc) and its command
    line. None when there is no such process."""
    if pid <= 0:
        return None
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":  # a zombie: gone but not yet reaped
                return None
            start = int(fields[19])
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = [a.decode(errors="replace") for a in fh.read().split(b"\0")[:-1]]
        except (OSError, ValueError, IndexError):
            return None
        return {"start": start, "cmdline": cmdline}
    import psutil

    try:
        proc = psutil.Process(pid)
        return {"start": proc.create_time(), "cmdline": proc.cmdline()}
    except psutil.Error:
        return None


def ours(st: dict) -> bool:
    """Whether the state ``st`` names a living process that is the API it recorded (process id,
    start time and command line all match)."""
    try:
        pid = int(st.get("pid", 0))
    except (TypeError, ValueError):
        return False
    found = identity(pid)
    return found is not None and "start" in st and found == {"start": st["start"], "cmdline": st.get("cmdline")}


def signal_if_ours(st: dict, sig: int) -> bool:
    """Send ``sig`` to the API the state ``st`` names, when it is that process (``ours``): to its
    process group when we started it as the leader of a session of its own, else to it alone.
    False (nothing sent) for any other process."""
    if not ours(st):
        return False
    pid = int(st["pid"])
    try:
        if st.get("own_session") and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True
