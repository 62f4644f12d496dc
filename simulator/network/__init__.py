"""Timers of collective plans: the discrete-event (SimPy) engine and the closed form."""
