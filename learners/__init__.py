"""Reference private bandit learners (coming in a later issue)."""
