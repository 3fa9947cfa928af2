"""gfootball glue: a ``FootballEnv`` built from scenario *data*, rendered only on demand.

The official loader imports each scenario file and runs it; here the file has already been read
into data (``scenario.py``), and a builder subclass replays those calls into gfootball's
``ScenarioConfig``. gfootball's own wrappers are not used: gym 0.26's wrappers expect a 5-tuple
``step`` and gfootball returns 4 values, so ``FootballEnv`` is driven directly, as officially.

Rendering. gfootball renders with OpenGL (EGL off-screen when there is no display); a 1280×720
frame costs about 0.5 s with Mesa's software renderer against about 4 ms for an engine step. The
engine keeps rendering off and an episode asks for a frame only when a model must see one:
``frame()`` switches rendering on for one engine render and off again. The first frame of an
episode moves the game into gfootball's rendering engine (one per process, reused across
episodes); that costs several seconds, which an episode whose agent reads no images never pays.
A rendering engine must never be reset with rendering off (gfootball then crashes on the next
frame), so every episode builds a fresh ``FootballEnv`` and closes it, which returns the engine
to gfootball's pool.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image, ImageEnhance

#: The official configuration (reference §2.3): one controlled left player, full action set.
BASE_CONFIG: dict[str, Any] = {
    "action_set": "full",
    "physics_steps_per_frame": 10,
    "render_resolution_x": 1280,
    "render_resolution_y": 720,
    "display_game_stats": True,
    "real_time": False,
    # The official runner dumps gfootball's own episode files; the platform keeps every raw
    # observation itself, and the dumps do not influence the game.
    "dump_full_episodes": False,
    "write_video": False,
    "players": ["agent:left_players=1"],
}

ACTION_NAMES = (
    "idle", "left", "top_left", "top", "top_right", "right", "bottom_right", "bottom", "bottom_left",
    "long_pass", "high_pass", "short_pass", "shot", "sprint", "release_direction", "release_sprint",
    "sliding", "dribble", "release_dribble", "builtin_ai",
)
ACTION_CODES = {name: code for code, name in enumerate(ACTION_NAMES)}
BUILTIN_AI = ACTION_CODES["builtin_ai"]

# gfootball keeps its engines in module globals; two episodes in one process must not interleave.
_ENGINE_LOCK = threading.RLock()


class EngineUnavailable(RuntimeError):
    """gfootball is not installed (or its engine library does not load) on this worker."""


def _gfootball() -> tuple[Any, Any, Any, Any]:
    try:
        import gfootball_engine as libgame  # type: ignore[import-untyped]
        from gfootball.env import config as config_module  # type: ignore[import-untyped]
        from gfootball.env import football_env, scenario_builder
    except Exception as exc:  # noqa: BLE001 - a broken build raises more than ImportError
        raise EngineUnavailable(
            f"the gfootball engine is not available on this worker ({type(exc).__name__}: {exc}); "
            "run scripts/setup, which builds it"
        ) from exc
    return libgame, config_module, football_env, scenario_builder


def colour_fix(frame: np.ndarray) -> Image.Image:
    """The official hard-coded correction of gfootball's dark frames: brightness ×1.5, contrast ×0.6,
    brightness ×1.2, applied in that order."""
    image = Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8))
    image = ImageEnhance.Brightness(image).enhance(1.5)
    image = ImageEnhance.Contrast(image).enhance(0.6)
    return ImageEnhance.Brightness(image).enhance(1.2)


def make_env(scenario: Mapping[str, Any], *, seed: int) -> Any:
    """A reset ``FootballEnv`` playing ``scenario`` (the dict of ``FootballScenario.as_dict``)."""
    libgame, config_module, football_env, scenario_builder = _gfootball()
    role = libgame.e_PlayerRole
    team = libgame.e_Team

    # gfootball's classes arrive with its lazily imported modules; as Any they can be subclassed here.
    Scenario: Any = scenario_builder.Scenario
    Config: Any = config_module.Config

    class DataScenario(Scenario):
        # Same steps as gfootball's Scenario.__init__, with the module import replaced by the data.
        def __init__(self, config: Any) -> None:
            self._scenario_cfg = libgame.ScenarioConfig.make()
            self._config = config
            self._active_team = team.e_Left
            for name, value in scenario.get("config", {}).items():
                setattr(self._scenario_cfg, name, value)
            self.SetBallPosition(*scenario["ball"][:2])
            for side, players in ((team.e_Left, scenario.get("left", [])), (team.e_Right, scenario.get("right", []))):
                self.SetTeam(side)
                for p in players:
                    self.AddPlayer(p["x"], p["y"], getattr(role, f"e_PlayerRole_{p['role']}"),
                                   bool(p.get("lazy", False)), bool(p.get("controllable", True)))
            self.SetTeam(team.e_Left)
            self._FakePlayersForEmptyTeam(self._scenario_cfg.left_team)
            self.SetTeam(team.e_Right)
            self._FakePlayersForEmptyTeam(self._scenario_cfg.right_team)
            self._BuildScenarioConfig()

    class DataConfig(Config):
        def NewScenario(self, inc: int = 1) -> None:  # noqa: N802 - gfootball's name
            if "episode_number" not in self._values:
                self._values["episode_number"] = 0
            self._values["episode_number"] += inc
            self._scenario_values: dict[str, Any] = {}
            self._scenario_cfg = DataScenario(self).ScenarioConfig()

    values = dict(BASE_CONFIG)
    values["level"] = "magebench_data_scenario"  # never imported: DataConfig builds from data
    values["game_engine_random_seed"] = int(seed) % 2_000_000_000
    with _ENGINE_LOCK:
        env = football_env.FootballEnv(DataConfig(values))
        env.reset()
    return env


class Engine:
    """One episode's gfootball environment with rendering switched on only for requested frames."""

    def __init__(self, scenario: Mapping[str, Any], *, seed: int) -> None:
        _ENGINE_LOCK.acquire()
        try:
            self.env = make_env(scenario, seed=seed)
        except BaseException:
            _ENGINE_LOCK.release()
            raise
        self._closed = False
        self.observation: dict[str, Any] = self.env.observation()[0]

    def step(self, code: int) -> tuple[dict[str, Any], bool]:
        observation, _, done, _ = self.env.step([int(code)])
        self.observation = observation[0]
        return self.observation, bool(done)

    def frame(self, *, channels_reversed: bool = False) -> np.ndarray:
        """The current state rendered at 1280×720: RGB as gfootball's observation['frame'], or with
        the channels reversed as ``render("rgb_array")`` returns it (the official first frame)."""
        # render() hands back observation['frame'] with its channels reversed (for OpenCV); reversing
        # them again is a free view, where env.observation() would deep-copy every field and the frame.
        reversed_channels = self.env.render(mode="rgb_array")
        self.env.disable_render()
        if channels_reversed:
            return np.ascontiguousarray(reversed_channels)
        return np.ascontiguousarray(reversed_channels[..., ::-1])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.env.close()
        finally:
            _ENGINE_LOCK.release()
