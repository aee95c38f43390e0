"""Test tools for the Agent Config import (written for agentspec's tests)."""

from __future__ import annotations

from typing import Any


def roll_die(sides: int) -> dict[str, Any]:
    """Roll a die with `sides` sides and return the result."""
    return {"result": min(sides, 4)}


def check_prime(nums: list[int]) -> str:
    """Say which of `nums` are prime."""
    primes = [n for n in nums if n > 1 and all(n % d for d in range(2, n))]
    return f"{primes} are prime" if primes else "none are prime"
