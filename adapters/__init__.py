"""Adapters: what connects annotations to schedulers.

* `adapters.simulated`: inside the replay simulator, for every policy alike.
"""
