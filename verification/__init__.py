"""Verification of the accounting against itself and against samples (coming in a later issue)."""
