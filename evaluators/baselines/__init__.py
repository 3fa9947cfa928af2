"""Idle, random and oracle agents, and a server exposing them over the OpenAI chat protocol."""
from evaluators.baselines.agents import (
    AGENT_NAMES,
    BaselineAgent,
    IdleAgent,
    OracleAgent,
    RandomAgent,
    make_agent,
)
from evaluators.baselines.server import (
    FAULT_MODES,
    Fault,
    RunningServer,
    serve_forever,
    start_server,
)

__all__ = [
    "AGENT_NAMES",
    "FAULT_MODES",
    "BaselineAgent",
    "Fault",
    "IdleAgent",
    "OracleAgent",
    "RandomAgent",
    "RunningServer",
    "make_agent",
    "serve_forever",
    "start_server",
]
