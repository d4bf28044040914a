"""The demo package."""
from .pkg import value


def answer():
    return value() + 1
