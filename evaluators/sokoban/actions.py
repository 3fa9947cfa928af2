"""Sokoban's action names, the official ones: what the parsers accept and the baselines play.

Kept apart from the plug-in so that the baselines, which the plug-in hands requests to, can name
them without importing the plug-in back.
"""
from __future__ import annotations

ACTIONS: tuple[str, ...] = ("Up", "Down", "Left", "Right")
