"""Standalone programs run on a TPU machine by evals/recording/record.py, one failure (or healthy run) each."""
