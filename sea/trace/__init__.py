"""Record a pulse to a trace file and replay it offline."""
