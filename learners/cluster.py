"""Dask, the optional cluster backend: its import and the connection to a scheduler.

The runner (:func:`learners.runner.run_experiment`) and the protocol audits
(:mod:`verification.audit`) run their jobs on a Dask cluster when given a scheduler; both import
:mod:`distributed` through :func:`import_distributed`, so a missing ``dask`` extra is one message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from learners.errors import LearnerError, ParameterError

__all__ = ["CONNECT_TIMEOUT", "connect", "import_distributed"]


def import_distributed(error: Callable[[str], Exception] = LearnerError) -> Any:
    """The :mod:`distributed` module, imported on first use: it is an optional dependency.

    Parameters
    ----------
    error : callable, optional
        The exception class (or factory, called with the message) raised when the ``dask`` extra is
        not installed: :class:`~learners.errors.LearnerError` here, a package's own error elsewhere
        (:mod:`verification.audit` raises its :class:`~verification.errors.VerificationError`).
    """
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is not installed
        raise error(
            "a scheduler was given but dask.distributed is not installed (pip install 'dpcert[dask]')"
        ) from exc
    return distributed


#: Seconds a scheduler address may take to answer before the run gives up (one line, status 2).
CONNECT_TIMEOUT = 4.0

_SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")


def connect(address: str, name: str = "scheduler", timeout: float = CONNECT_TIMEOUT) -> Any:
    """A :class:`distributed.Client` of the Dask scheduler at ``address``.

    An address that is malformed, or a scheduler that does not answer within about ``timeout``
    seconds, is a :class:`ParameterError` naming ``name`` (the option or argument it came from),
    never a hang: the connection is made in a daemon thread that is abandoned at the deadline.
    """
    distributed = import_distributed()
    if not isinstance(address, str) or not address.strip():
        raise ParameterError(name, address, "a Dask scheduler address such as tcp://host:8786")
    try:
        from distributed.comm.addressing import parse_address, parse_host_port

        scheme, location = parse_address(address)
        host, port = None, 0
        if scheme not in _SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}")
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(location)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} is not in 1..65535")
    except Exception as exc:  # distributed raises ValueError, TypeError or AssertionError here
        raise ParameterError(
            name, address, f"a Dask scheduler address such as tcp://host:8786 ({exc})"
        ) from None
    if host is not None:
        import socket

        try:  # a quick, clean answer for the common case: nothing listens there
            socket.create_connection((host, int(port)), timeout=timeout).close()
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            valid = f"the address of a running Dask scheduler ({reason})"
            raise ParameterError(name, address, valid) from None

    import threading

    box: dict[str, Any] = {}

    def attempt() -> None:
        client = distributed.Client.__new__(distributed.Client)
        try:
            client.__init__(address, timeout=timeout, set_as_default=False)
            box["client"] = client
        except BaseException as exc:  # reported to the caller below
            box["error"] = exc
            # A half-built client would try to close itself when collected, for seconds, and
            # print a traceback: it never connected, so there is nothing to close.
            client.status = "closed"

    thread = threading.Thread(target=attempt, name="dpcert-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in box:
        return box["client"]
    error = box.get("error")
    reason = (
        f"{type(error).__name__}: {' '.join(str(error).split())}" if error else f"no answer in {timeout:g} s"
    )
    raise ParameterError(name, address, f"the address of a running Dask scheduler ({reason})")
