"""``sea eval``: eval sets (cases of a persona's memory, inputs and expectations), run
through the real runtime on one model or several, judged from what the pulses emitted,
reported (table, JSON, JUnit XML), stored and compared with a baseline run."""
