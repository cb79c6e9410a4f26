"""The reproducer that never finishes: it would be honest, but it thinks for longer than the
task set's wall-clock limit, and the evaluator stops it (an infrastructure failure: timeout)."""

import time

time.sleep(3600)
