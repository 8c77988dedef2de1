"""A tiny lego_build plugin: one extension of every kind, registered by entry points only.

It stands for a user's own package (installed with ``pip install -e .``; here its
``.dist-info`` sits beside it so that putting ``tests/plugins`` on the path installs
it). Nothing in lego_build names it.
"""
