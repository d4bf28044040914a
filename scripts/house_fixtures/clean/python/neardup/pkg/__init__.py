"""A package directory beside module files."""


def value():
    return 41
